; AP start-up trampoline, copied to a 4 KiB page below 1 MiB. Assembled flat
; (org 0); the boot CPU patches the parameter block (boot/smp.c mirrors it).
; Real mode -> 32-bit protected mode -> long mode -> ap_entry(percpu).
; Every AP runs it at once (boot/smp.c starts them in parallel): each finds
; its own stack and per-CPU area in a table by its initial APIC ID.
bits 16
org 0
start:
	cli
	jmp short real_start
align 8
params:
p_cr3:     dq 0        ; +8   host page tables (below 4 GiB)
p_entry:   dq 0        ; +16  64-bit C entry
p_table:   dq 0        ; +24  slots {u32 apic_id, u32 0, u64 stack top, u64 percpu}
p_count:   dq 0        ; +32  how many slots
p_efer:    dq 0        ; +40  EFER bits to set (LME, NXE)
p_cr4:     dq 0        ; +48
gdtr:      dw gdt_end - gdt - 1   ; +56
gdtr_base: dd gdt      ; +58  patched: page + gdt
           dw 0
pm32_ptr:  dd pm32     ; +64  patched: page + pm32
           dw 0x08
lm64_ptr:  dd lm64     ; +70  patched: page + lm64
           dw 0x18
align 16
gdt:
	dq 0
	dq 0x00cf9a000000ffff  ; 0x08 32-bit code
	dq 0x00cf92000000ffff  ; 0x10 data
	dq 0x00af9a000000ffff  ; 0x18 64-bit code
gdt_end:

real_start:
	mov ax, cs
	mov ds, ax
	xor esi, esi
	mov si, ax
	shl esi, 4             ; esi = linear base of this page, kept across modes
	lgdt [gdtr]
	mov eax, cr0
	and eax, 0x9fffffff    ; caches on (CD, NW clear) after INIT
	or eax, 1
	mov cr0, eax
	jmp dword far [pm32_ptr]

bits 32
pm32:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov eax, [esi + p_cr4]
	mov cr4, eax
	mov eax, [esi + p_cr3]
	mov cr3, eax
	mov ecx, 0xc0000080
	rdmsr
	or eax, [esi + p_efer]
	wrmsr
	mov eax, cr0
	or eax, 0x80000001
	mov cr0, eax
	jmp far [esi + lm64_ptr]

bits 64
lm64:
	mov esi, esi           ; the page's base, zero-extended
	; The initial APIC ID: CPUID leaf 0BH's x2APIC ID where the leaf exists
	; (max leaf >= 0BH and EBX[15:0] != 0, SDM Vol. 3A "Identifying
	; Topology"), else CPUID.1:EBX[31:24].
	xor eax, eax
	cpuid
	cmp eax, 0xb
	jb .leaf1
	mov eax, 0xb
	xor ecx, ecx
	cpuid
	test bx, bx
	jz .leaf1
	mov r8d, edx
	jmp .find
.leaf1:
	mov eax, 1
	cpuid
	shr ebx, 24
	mov r8d, ebx
.find:
	mov rdi, [rsi + p_table]
	mov rcx, [rsi + p_count]
.next:
	test rcx, rcx
	jz .stray
	cmp [rdi], r8d
	je .found
	add rdi, 24
	dec rcx
	jmp .next
.found:
	mov rsp, [rdi + 8]
	mov rdi, [rdi + 16]
	mov rax, [rsi + p_entry]
	push 0                 ; fake return address: the entry never returns
	jmp rax
.stray:                        ; a CPU no slot names: it stays here
	cli
	hlt
	jmp .stray
global trampoline_end
trampoline_end:
