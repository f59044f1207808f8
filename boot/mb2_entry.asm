; Multiboot2 entry: header, then 32-bit protected mode (from GRUB) to long mode
; with a temporary identity map of the first 4 GiB, then mb2_main(magic, info).
bits 32
MB2_MAGIC    equ 0xe85250d6
MB2_ARCH_I386 equ 0

section .multiboot2
align 8
mb2_header:
	dd MB2_MAGIC
	dd MB2_ARCH_I386
	dd mb2_header_end - mb2_header
	dd -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
	; end tag
	dw 0, 0
	dd 8
mb2_header_end:

section .boot.text progbits alloc exec
global mb2_entry
extern mb2_main
mb2_entry:
	cli
	mov esp, boot_stack_top
	mov edi, eax            ; magic
	mov esi, ebx            ; info
	; PML4[0] -> PDPT; PDPT[0..3] -> PD0..3 of 2 MiB pages.
	mov eax, boot_pdpt
	or eax, 3
	mov [boot_pml4], eax
	mov ecx, 0
.pdpt:
	mov eax, ecx
	shl eax, 12
	add eax, boot_pd
	or eax, 3
	mov [boot_pdpt + ecx * 8], eax
	inc ecx
	cmp ecx, 4
	jne .pdpt
	mov ecx, 0
.pd:
	mov eax, ecx
	shl eax, 21
	or eax, 0x83            ; present, writable, 2 MiB
	mov [boot_pd + ecx * 8], eax
	mov eax, ecx
	shr eax, 11             ; high dword of the address
	mov [boot_pd + ecx * 8 + 4], eax
	inc ecx
	cmp ecx, 2048
	jne .pd
	mov eax, boot_pml4
	mov cr3, eax
	mov eax, cr4
	or eax, 1 << 5          ; PAE
	mov cr4, eax
	mov ecx, 0xc0000080
	rdmsr
	or eax, 1 << 8          ; LME
	wrmsr
	mov eax, cr0
	or eax, 0x80000001      ; PG, PE
	and eax, 0x9fffffff     ; caches on
	mov cr0, eax
	lgdt [boot_gdtr]
	jmp 0x08:long_entry

bits 64
long_entry:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor eax, eax
	mov fs, ax
	mov gs, ax
	mov rsp, boot_stack_top
	call mb2_main
.hang:
	cli
	hlt
	jmp .hang

section .rodata
align 16
boot_gdt:
	dq 0
	dq 0x00af9a000000ffff   ; 64-bit code
	dq 0x00cf92000000ffff   ; data
boot_gdtr:
	dw boot_gdtr - boot_gdt - 1
	dq boot_gdt

section .bss
align 4096
boot_pml4: resb 4096
boot_pdpt: resb 4096
boot_pd:   resb 4096 * 4
boot_stack: resb 16384
boot_stack_top:

section .note.GNU-stack noalloc noexec nowrite progbits
