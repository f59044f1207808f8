; bochstest: a tiny guest, a bzImage to the hypervisor's Linux loader, that
; shows Bochs 3.0's VMX defects (docs/bochs.md, the table). Booted with the
; hypervisor's bochstest=1 (HC_HV_BOCHSTEST), on one vCPU (smp=1; Bochs runs
; 2 CPUs, the second never started, for exc-kick). Eight VM entries,
; each set up by the hypervisor at the guest's request, and one test of
; Bochs's LAPIC timer, and what the guest saw:
;   pir-empty     a posted-interrupt notification with the PIR empty, guest
;                 IF = 1: how often vector 0xff was delivered (SDM: RVI stays
;                 as it was, so 0; Bochs 3.0 made RVI 0xff, so 1)
;   entry-pending the kick pending at the entry, guest IF = 0: the
;                 external-interrupt exits while the guest spins (SDM: IF does
;                 not block them under external-interrupt exiting, so >= 1;
;                 Bochs 3.0 masked it until an STI, so 0)
;   virq-cli      vector 0x40 pending in RVI, the kick pending, the entry
;                 under blocking by STI and the guest's next instruction CLI:
;                 interrupts taken with IF = 0 (SDM: none, the kick exits and
;                 0x40 waits for the STI after, so 0 then 1; Bochs 3.0
;                 delivered 0x40 with IF = 0 when the kick came)
;   hlt-virq      vector 0x50 pending in RVI, the entry in the HLT state with
;                 IF = 1: whether 0x50 came before the hypervisor's hang
;                 check woke the vCPU (hangcheck=, its VMX-preemption timer)
;                 (SDM: the pending virtual interrupt wakes HLT, so 1 and no
;                 such exit; Bochs 3.0 slept on until that exit, so 1 after 1)
;   hlt-window    interrupt-window exiting on, the guest halts with STI; HLT:
;                 its window exit and the hang check's exits before the guest
;                 ran again (SDM: the window exit wakes HLT, so 1 and 0;
;                 Bochs 3.0 slept on until the hang check's exit, so 1 and 1)
;   tsc-deadline  the LAPIC timer in TSC-deadline mode, vector 0x60, which
;                 timer=deadline hands to the guest (its WRMSR and RDMSR of
;                 IA32_TSC_DEADLINE reach the CPU's LAPIC): a near deadline,
;                 its interrupt, then the MSR read (SDM Vol. 3A, "TSC-Deadline
;                 Mode": the timer disarms and the MSR reads 0; Bochs 3.0 kept
;                 the deadline, defect J), then EOI and the LVT masked, which
;                 hands the timer back to the hypervisor: 0x60's count (1; 2
;                 where the MSR still held the spent deadline)
;   exc-kick      the kick pending, the entry under blocking by STI and the
;                 guest's next instruction UD2 (shows only with 2 or more
;                 Bochs CPUs, whose main loop runs them in turn): the #UD
;                 handler's runs and how far the stack was left lower (SDM:
;                 the kick's exit at the handler's first instruction saves
;                 that RIP, so 1 and 0; Bochs 3.0 with 2 CPUs saved the
;                 UD2's RIP with the handler's CS, RSP and IF = 0, so UD2
;                 ran again from there: 1 and 40, the first frame left)
;   virq-np       vector 0x70 pending in RVI, its IDT gate not present, #NP
;                 intercepted for the entry: the exit's IDT-vectoring
;                 information, which the hypervisor prints (SDM: the
;                 interrupt in delivery, 0x80000070; Bochs 3.0 reported the
;                 event its CPU had recorded last, defect Q), and 0x70's
;                 handler runs 0 times (nothing delivered again)
;   hlt-pending   the same, the entry in the HLT state: whether its exit came
;                 (the hypervisor then ends the HLT state); Bochs 3.0 never
;                 woke, and the run reaches its timeout after "entering"
; Then the Bochs shutdown port (the hypervisor ends the run).
; With bochstest=sipi-once on the command line (its own boot, smp=2) only
; sipi-once: the AP started 50 times by INIT and a single SIPI (below).
; nasm -f bin: the boot sector with the setup header, one setup sector, then
; the protected-mode part whose 64-bit entry is at offset 0x200 (boot
; protocol 2.12). The code is position independent (loaded where the
; hypervisor's loader puts it, identity-mapped, in long mode, IF = 0).

%define HC_HV_VERDICT    0x48560004
%define HC_HV_EXITS_OF   0x48560005
%define HC_HV_BOCHSTEST  0x48560006
%define HC_BT_ENTRY_PENDING 1
%define HC_BT_HLT_PENDING   2
%define HC_BT_PIR_EMPTY     3
%define HC_BT_VIRQ_CLI      4
%define HC_BT_EXC_KICK      5
%define HC_BT_VIRQ_HLT      6
%define HC_BT_WINDOW_HLT    7
%define HC_BT_VIRQ_NP       8
%define EXIT_REASON_EXTERNAL_INTR 1
%define EXIT_REASON_INTR_WINDOW   7
%define EXIT_REASON_PREEMPTION_TIMER 52
%define COM1 0x3f8
%define MSR_TSC_DEADLINE     0x6e0
%define MSR_X2APIC_EOI       0x80b
%define MSR_X2APIC_SVR       0x80f
%define MSR_X2APIC_ICR       0x830
%define MSR_X2APIC_LVT_TIMER 0x832
%define APIC_SVR_ENABLE  0x100
%define LVT_MASKED       0x10000
%define LVT_TSC_DEADLINE 0x40000        ; timer mode 10b (bits 18:17)
%define ICR_INIT 0x4500                 ; INIT, level assert (x2APIC: no de-assert)
%define ICR_SIPI 0x4600                 ; start-up, OR the vector
%define BP_EXT_CMD_LINE_PTR 0x0c8       ; struct boot_params (boot protocol)
%define BP_E820_ENTRIES     0x1e8
%define BP_CMD_LINE_PTR     0x228
%define BP_E820_TABLE       0x2d0
%define E820_RAM 1
%define TRAMP_COUNT 0x800               ; the AP's count, in its trampoline page
%define SIPI_AP     1                   ; the AP's APIC ID (the BSP's is 0)
%define SIPI_ROUNDS 50
%define SIPI_WAIT   5000000             ; TSC ticks: the bound on a round's wait
%define J_VECTOR 0x60
%define J_AHEAD  20000                  ; TSC ticks (Bochs: one an instruction)
%define J_WAIT   10000000               ; the bound on the wait for it
%define SPIN 200000

bits 16
org 0
	times 0x1f1 - ($ - $$) db 0
	db 1                            ; 0x1f1 setup_sects
	dw 0                            ; 0x1f2 root_flags
	dd (pm_end - pm_start + 15) / 16 ; 0x1f4 syssize
	dw 0, 0, 0                      ; 0x1f8 ram_size, vid_mode, root_dev
	dw 0xaa55                       ; 0x1fe boot_flag
	dw 0                            ; 0x200 jump
	db "HdrS"                       ; 0x202
	dw 0x020f                       ; 0x206 version 2.15
	dd 0                            ; 0x208 realmode_swtch
	dw 0, 0                         ; 0x20c start_sys_seg, kernel_version
	db 0                            ; 0x210 type_of_loader
	db 1                            ; 0x211 loadflags: LOADED_HIGH
	dw 0                            ; 0x212 setup_move_size
	dd 0x100000                     ; 0x214 code32_start
	dd 0, 0, 0                      ; 0x218 ramdisk_image, ramdisk_size, bootsect_kludge
	dw 0                            ; 0x224 heap_end_ptr
	db 0, 0                         ; 0x226 ext_loader_ver, ext_loader_type
	dd 0                            ; 0x228 cmd_line_ptr
	dd 0x7fffffff                   ; 0x22c initrd_addr_max
	dd 0x200000                     ; 0x230 kernel_alignment
	db 1                            ; 0x234 relocatable_kernel
	db 21                           ; 0x235 min_alignment
	dw 1                            ; 0x236 xloadflags: XLF_KERNEL_64
	dd 255                          ; 0x238 cmdline_size
	dd 0                            ; 0x23c hardware_subarch
	dq 0                            ; 0x240 hardware_subarch_data
	dd 0, 0                         ; 0x248 payload_offset, payload_length
	dq 0                            ; 0x250 setup_data
	dq 0x1000000                    ; 0x258 pref_address
	dd 0x100000                     ; 0x260 init_size
	dd 0                            ; 0x264 handover_offset
	times 1024 - ($ - $$) db 0

pm_start:
bits 32
	cli                             ; the 32-bit entry is not used
	hlt
	jmp pm_start
	times 0x200 - ($ - pm_start) db 0

bits 64
entry64:
	cld
	lea rsp, [rel stack_top]
	mov [rel boot_params], rsi      ; the zero page (boot protocol, 64-bit entry)
	; the IDT: gate n -> stub n (interrupt gate, present, DPL 0)
	lea rdi, [rel idt]
	lea rbx, [rel stubs]
	xor ecx, ecx
	mov dx, cs
.gate:	mov rax, rbx
	mov word [rdi], ax              ; offset 15:0
	mov word [rdi + 2], dx          ; selector
	mov word [rdi + 4], 0x8e00      ; type 14, P
	shr rax, 16
	mov word [rdi + 6], ax          ; offset 31:16
	shr rax, 16
	mov dword [rdi + 8], eax        ; offset 63:32
	mov dword [rdi + 12], 0
	add rdi, 16
	add rbx, STUB_SIZE
	inc ecx
	cmp ecx, 256
	jb .gate
	lea rax, [rel idt]
	mov [rel idtr + 2], rax
	lidt [rel idtr]
	lea rsi, [rel s_start]
	call puts
	lea rsi, [rel s_opt_sipi]
	call cmdline_has
	test eax, eax
	jnz sipi_once

	; entry-pending
	call extint_exits
	mov r12, rax
	mov ebx, HC_BT_ENTRY_PENDING
	call bochstest
	call spin
	call extint_exits
	sub rax, r12
	mov r13, rax                    ; for the verdict
	mov [rel entry_exits], rax
	lea rsi, [rel s_entry]
	call puts
	mov rax, r13
	call putd
	call newline

	; virq-cli (before pir-empty: Bochs 3.0's vector 0xff would block 0x40)
	sti
	mov eax, HC_HV_BOCHSTEST
	mov ebx, HC_BT_VIRQ_CLI
	vmcall
	cli                             ; under blocking by STI: before any interrupt
	test rax, rax
	jnz bochstest.refused
	call spin
	mov rax, [rel counts + 0x40 * 8]
	mov rbx, [rel ifoff]
	mov [rel virq_ifoff], rbx
	lea rsi, [rel s_virq]
	call puts
	mov rax, [rel virq_ifoff]
	call putd
	sti
	call spin
	cli
	lea rsi, [rel s_virq2]
	call puts
	mov rax, [rel counts + 0x40 * 8]
	mov [rel virq_after], rax
	call putd
	call newline

	; hlt-virq (before pir-empty, for the same reason; 0x50 is above the
	; 0x40 left in service)
	mov ecx, EXIT_REASON_PREEMPTION_TIMER
	call exits_of
	mov r12, rax
	sti
	nop                             ; past the STI shadow: the HLT state wants no blocking
	mov eax, HC_HV_BOCHSTEST
	mov ebx, HC_BT_VIRQ_HLT
	vmcall                          ; back here when 0x50 ends the HLT state
	cli
	test rax, rax
	jnz bochstest.refused
	mov ecx, EXIT_REASON_PREEMPTION_TIMER
	call exits_of
	sub rax, r12
	mov [rel hv_wakes], rax
	lea rsi, [rel s_vhlt1]
	call puts
	mov rax, [rel counts + 0x50 * 8]
	mov [rel vhlt_taken], rax
	call putd
	lea rsi, [rel s_vhlt2]
	call puts
	mov rax, [rel hv_wakes]
	call putd
	call newline

	; hlt-window
	mov ecx, EXIT_REASON_PREEMPTION_TIMER
	call exits_of
	mov r12, rax
	mov ecx, EXIT_REASON_INTR_WINDOW
	call exits_of
	mov r13, rax
	mov eax, HC_HV_BOCHSTEST
	mov ebx, HC_BT_WINDOW_HLT
	vmcall
	test rax, rax
	jnz bochstest.refused
	sti
	hlt                             ; under blocking by STI: halts with IF = 1
	cli
	mov ecx, EXIT_REASON_INTR_WINDOW
	call exits_of
	sub rax, r13
	mov [rel win_exits], rax
	mov ecx, EXIT_REASON_PREEMPTION_TIMER
	call exits_of
	sub rax, r12
	mov [rel win_wakes], rax
	lea rsi, [rel s_win1]
	call puts
	mov rax, [rel win_exits]
	call putd
	lea rsi, [rel s_win2]
	call puts
	mov rax, [rel win_wakes]
	call putd
	call newline
	mov r13, [rel entry_exits]      ; (entry-pending's, kept in r13 for the verdict)

	; tsc-deadline (after hlt-window's 0x50, before pir-empty's 0xff: 0x60
	; must not wait behind a vector in service); timer=deadline hands the
	; LAPIC timer to the guest in this LVT state
	xor edx, edx
	mov ecx, MSR_X2APIC_SVR
	mov eax, APIC_SVR_ENABLE | 0xff
	wrmsr
	mov ecx, MSR_X2APIC_LVT_TIMER
	mov eax, LVT_TSC_DEADLINE | J_VECTOR
	wrmsr
	call rdtsc64
	add rax, J_AHEAD
	mov [rel j_armed], rax
	mov rdx, rax
	shr rdx, 32
	mov ecx, MSR_TSC_DEADLINE
	wrmsr
	call rdtsc64
	lea r12, [rax + J_WAIT]
	sti
.j_wait:
	cmp qword [rel counts + J_VECTOR * 8], 0
	jne .j_fired
	call rdtsc64
	cmp rax, r12
	jb .j_wait
.j_fired:
	cli
	mov ecx, MSR_TSC_DEADLINE
	rdmsr
	shl rdx, 32
	or rax, rdx
	mov [rel j_after], rax
	mov rax, [rel counts + J_VECTOR * 8]
	mov [rel j_first], rax
	xor eax, eax
	xor edx, edx
	mov ecx, MSR_X2APIC_EOI
	wrmsr                           ; 0x60 out of service: a second one could come
	mov ecx, MSR_X2APIC_LVT_TIMER
	mov eax, LVT_MASKED | LVT_TSC_DEADLINE | J_VECTOR
	wrmsr                           ; the hypervisor takes the timer back
	sti
	call spin
	cli
	mov rax, [rel counts + J_VECTOR * 8]
	mov [rel j_taken], rax
	lea rsi, [rel s_j1]
	call puts
	mov rax, [rel j_first]
	call putd
	lea rsi, [rel s_j2]
	call puts
	mov rax, [rel j_armed]
	call putd
	lea rsi, [rel s_j3]
	call puts
	mov rax, [rel j_after]
	call putd
	lea rsi, [rel s_j4]
	call puts
	mov rax, [rel j_taken]
	call putd
	lea rsi, [rel s_j5]
	call puts

	; pir-empty
	sti
	mov ebx, HC_BT_PIR_EMPTY
	call bochstest
	call spin
	cli
	lea rsi, [rel s_pir]
	call puts
	mov rax, [rel counts + 0xff * 8]
	mov r14, rax                    ; for the verdict
	call putd
	lea rsi, [rel s_pir2]
	call puts
	call all_counts
	call putd
	call newline

	; exc-kick
	call extint_exits
	mov r12, rax
	mov rbp, rsp
	sti
	mov eax, HC_HV_BOCHSTEST
	mov ebx, HC_BT_EXC_KICK
	vmcall
	ud2                             ; under blocking by STI: #UD before the kick
	cli
	test rax, rax
	jnz bochstest.refused
	mov rbx, rbp
	sub rbx, rsp                    ; how far the stack was left lower
	mov rsp, rbp
	mov [rel exc_stack], rbx
	call extint_exits
	sub rax, r12
	mov [rel exc_exits], rax
	lea rsi, [rel s_exc1]
	call puts
	mov rax, [rel ud_count]
	call putd
	lea rsi, [rel s_exc2]
	call puts
	mov rax, [rel exc_stack]
	call putd
	lea rsi, [rel s_exc3]
	call puts
	mov rax, [rel exc_exits]
	call putd
	call newline

	; virq-np (defect Q): vector 0x70 pending in RVI, its gate not present,
	; #NP intercepted for the entry: the hypervisor prints the exit's
	; IDT-vectoring information (SDM: 0x80000070, the interrupt in
	; delivery) and delivers nothing again; the EOI retires 0x70 from SVI.
	lea rdi, [rel idt + 0x70 * 16]
	and word [rdi + 4], 0x7fff      ; P = 0
	sti
	mov ebx, HC_BT_VIRQ_NP
	call bochstest
	cli
	or word [rdi + 4], 0x8000       ; present again
	mov ecx, MSR_X2APIC_EOI
	xor eax, eax
	xor edx, edx
	wrmsr
	lea rsi, [rel s_np]
	call puts
	mov rax, [rel counts + 0x70 * 8]
	call putd
	call newline

	; hlt-pending (last: Bochs 3.0 never comes back)
	lea rsi, [rel s_hlt]
	call puts
	call extint_exits
	mov r12, rax
	mov ebx, HC_BT_HLT_PENDING
	call bochstest
	call extint_exits
	sub rax, r12
	mov r15, rax
	lea rsi, [rel s_woke]
	call puts
	mov rax, r15
	call putd
	call newline
	; The verdict, by the SDM: no vector 0xff, an exit for each pending kick.
	xor ebx, ebx
	test r14, r14
	jnz .verdict
	test r13, r13
	jz .verdict
	test r15, r15
	jz .verdict
	cmp qword [rel virq_ifoff], 0
	jne .verdict
	cmp qword [rel virq_after], 1
	jne .verdict
	cmp qword [rel ud_count], 1
	jne .verdict
	cmp qword [rel exc_stack], 0
	jne .verdict
	cmp qword [rel exc_exits], 0
	je .verdict
	cmp qword [rel vhlt_taken], 1
	jne .verdict
	cmp qword [rel hv_wakes], 0
	jne .verdict
	cmp qword [rel win_exits], 1
	jne .verdict
	cmp qword [rel win_wakes], 0
	jne .verdict
	cmp qword [rel j_first], 1
	jne .verdict
	cmp qword [rel j_after], 0
	jne .verdict
	cmp qword [rel j_taken], 1
	jne .verdict
	inc ebx
.verdict:
	mov eax, HC_HV_VERDICT
	vmcall
	lea rsi, [rel s_done]
	call puts
	lea rsi, [rel s_shutdown]       ; the Bochs shutdown port: the hypervisor reports, Bochs ends
	mov dx, 0x8900
.sd:	lodsb
	test al, al
	jz .stop
	out dx, al
	jmp .sd
.stop:	cli
	hlt
	jmp .stop

; sipi-once (its own boot: the command line's bochstest=sipi-once, smp=2):
; SIPI_ROUNDS times INIT, then a single SIPI to the AP, each with a bounded
; wait for the AP's count to move. The trampoline is real-mode code in the
; first e820 RAM page at or above 0x1000: LOCK INC of the count in its own
; page, then CLI; HLT.
sipi_once:
	mov rsi, [rel boot_params]
	movzx ecx, byte [rsi + BP_E820_ENTRIES]
	mov r14d, 0x1000
.page:	lea rdi, [rsi + BP_E820_TABLE]
	mov edx, ecx
.ent:	test edx, edx
	jz .next_page
	cmp dword [rdi + 16], E820_RAM
	jne .next_ent
	mov rax, [rdi]                  ; base
	cmp r14, rax
	jb .next_ent
	add rax, [rdi + 8]              ; end
	lea r8, [r14 + 0x1000]
	cmp r8, rax
	jbe .found
.next_ent:
	add rdi, 20
	dec edx
	jmp .ent
.next_page:
	add r14d, 0x1000
	cmp r14d, 0xa0000
	jb .page
	lea rsi, [rel s_sipi_nopage]
	call puts
	xor ebx, ebx
	jmp entry64.verdict
.found:
	mov ecx, 1
	cpuid
	shr ebx, 24
	test ebx, ebx
	jz .bsp_ok
	lea rsi, [rel s_sipi_notbsp]
	call puts
	xor ebx, ebx
	jmp entry64.verdict
.bsp_ok:
	lea rsi, [rel tramp]
	mov rdi, r14
	mov ecx, tramp_end - tramp
	rep movsb
	mov dword [r14 + TRAMP_COUNT], 0
	xor r12d, r12d                  ; rounds whose start was seen
	xor r13d, r13d                  ; rounds
	mov r15d, -1                    ; the first round not seen
.round:
	mov ebp, [r14 + TRAMP_COUNT]
	mov ecx, MSR_X2APIC_ICR
	mov edx, SIPI_AP
	mov eax, ICR_INIT
	wrmsr
	mov eax, r14d
	shr eax, 12
	or eax, ICR_SIPI
	wrmsr                           ; the one SIPI, at once (no wait after the INIT)
	call rdtsc64
	lea rbx, [rax + SIPI_WAIT]
.wait:	pause
	cmp ebp, [r14 + TRAMP_COUNT]
	jne .seen
	call rdtsc64
	cmp rax, rbx
	jb .wait
	cmp r15d, -1
	jne .next
	mov r15d, r13d
	jmp .next
.seen:	inc r12d
.next:	inc r13d
	cmp r13d, SIPI_ROUNDS
	jb .round
	lea rsi, [rel s_sipi1]
	call puts
	mov eax, r12d
	call putd
	lea rsi, [rel s_sipi2]
	call puts
	mov eax, SIPI_ROUNDS
	call putd
	lea rsi, [rel s_sipi3]
	call puts
	mov eax, [r14 + TRAMP_COUNT]
	call putd
	cmp r15d, -1
	je .all
	lea rsi, [rel s_sipi4]
	call puts
	mov eax, r15d
	inc eax
	call putd
.all:	call newline
	xor ebx, ebx
	cmp r12d, SIPI_ROUNDS
	jne entry64.verdict
	cmp dword [r14 + TRAMP_COUNT], SIPI_ROUNDS
	jne entry64.verdict
	inc ebx
	jmp entry64.verdict

; The AP's start: real mode, CS = the page (CS base = the SIPI vector << 12),
; IP = 0.
bits 16
tramp:
	lock inc dword [cs:TRAMP_COUNT]
.halt:	cli
	hlt
	jmp .halt
tramp_end:
bits 64

; EAX = 1 when the word at RSI (NUL-ended) is on the guest's command line.
cmdline_has:
	push rbx
	push rcx
	push rdx
	push rdi
	mov rbx, [rel boot_params]
	mov edi, [rbx + BP_CMD_LINE_PTR]
	mov eax, [rbx + BP_EXT_CMD_LINE_PTR]
	shl rax, 32
	or rdi, rax
	xor eax, eax
.pos:	cmp byte [rdi], 0
	je .done
	xor ecx, ecx
.cmp:	mov dl, [rsi + rcx]
	test dl, dl
	jz .end_of_word
	cmp dl, [rdi + rcx]
	jne .skip
	inc ecx
	jmp .cmp
.end_of_word:
	mov dl, [rdi + rcx]
	test dl, dl
	jz .yes
	cmp dl, ' '
	je .yes
.skip:	mov dl, [rdi]                   ; to the next word
	inc rdi
	test dl, dl
	jz .done
	cmp dl, ' '
	jne .skip
	jmp .pos
.yes:	mov eax, 1
.done:	pop rdi
	pop rdx
	pop rcx
	pop rbx
	ret

; HC_HV_BOCHSTEST with RBX = the test; a refusal is reported and stops the guest.
bochstest:
	mov eax, HC_HV_BOCHSTEST
	vmcall
	test rax, rax
	jnz .refused
	ret
.refused:
	lea rsi, [rel s_refused]
	call puts
	jmp entry64.stop

; RAX = this vCPU's external-interrupt exits so far.
extint_exits:
	push rcx
	mov ecx, EXIT_REASON_EXTERNAL_INTR
	call exits_of
	pop rcx
	ret

; RAX = this vCPU's exits of basic reason ECX so far.
exits_of:
	push rbx
	push rcx
	push rdx
	push rcx
	mov eax, 1
	cpuid
	shr ebx, 24                     ; initial APIC ID
	pop rcx
	mov eax, HC_HV_EXITS_OF
	vmcall
	pop rdx
	pop rcx
	pop rbx
	ret

; RAX = the TSC.
rdtsc64:
	rdtsc
	shl rdx, 32
	or rax, rdx
	ret

spin:	mov ecx, SPIN
.l:	dec ecx
	jnz .l
	ret

; RAX = interrupts taken at vectors 32-255.
all_counts:
	xor eax, eax
	mov ecx, 32
.l:	lea rdx, [rel counts]
	add rax, [rdx + rcx * 8]
	inc ecx
	cmp ecx, 256
	jb .l
	ret

puts:	lodsb
	test al, al
	jz .e
	call putc
	jmp puts
.e:	ret

newline:
	mov al, 10
putc:	push rdx
	push rax
	mov dx, COM1 + 5
.w:	in al, dx
	test al, 0x20
	jz .w
	pop rax
	mov dx, COM1
	out dx, al
	pop rdx
	ret

; RAX in decimal.
putd:	push rbx
	push rcx
	push rdx
	mov rbx, 10
	xor ecx, ecx
.d:	xor edx, edx
	div rbx
	push rdx
	inc ecx
	test rax, rax
	jnz .d
.p:	pop rax
	add al, '0'
	call putc
	dec ecx
	jnz .p
	pop rdx
	pop rcx
	pop rbx
	ret

; Interrupts count per vector and return (no EOI: an interrupt the SDM says
; does not come must not be hidden by the next one); #UD is counted and its
; UD2 skipped (exc-kick); any other exception stops.
intr_common:
	push rax
	push rbx
	mov rax, [rsp + 16]
	cmp rax, 32
	jb .exc
	lea rbx, [rel counts]
	inc qword [rbx + rax * 8]
	test qword [rsp + 40], 0x200    ; the interrupted RFLAGS.IF
	jnz .ifon
	inc qword [rel ifoff]           ; an interrupt taken with IF = 0
.ifon:
	pop rbx
	pop rax
	add rsp, 8
	iretq
.exc:	cmp rax, 6
	jne .stop
	inc qword [rel ud_count]
	add qword [rsp + 24], 2         ; the interrupted RIP: past the UD2
	pop rbx
	pop rax
	add rsp, 8
	iretq
.stop:	lea rsi, [rel s_exc]
	call puts
	call putd
	call newline
	jmp entry64.stop

stubs:
%assign n 0
%rep 256
	push strict dword n
	jmp strict near intr_common
%assign n n + 1
%endrep
STUB_SIZE equ (($ - stubs) / 256)

s_start:   db "bochstest: start", 10, 0
s_virq:    db "bochstest: virq-cli: interrupts taken with IF=0: ", 0
s_virq2:   db ", vector 0x40 after STI: ", 0
s_pir:     db "bochstest: pir-empty: vector 0xff delivered ", 0
s_pir2:    db " times, interrupts ", 0
s_entry:   db "bochstest: entry-pending: external-interrupt exits while IF=0: ", 0
s_hlt:     db "bochstest: hlt-pending: entering HLT with IF=0", 10, 0
s_woke:    db "bochstest: hlt-pending: the guest runs again; external-interrupt exits: ", 0
s_exc1:    db "bochstest: exc-kick: #UD handled ", 0
s_np:      db "bochstest: virq-np: vector 0x70 handled ", 0
s_exc2:    db " times, stack left ", 0
s_exc3:    db " bytes lower, external-interrupt exits: ", 0
s_vhlt1:   db "bochstest: hlt-virq: vector 0x50 taken ", 0
s_vhlt2:   db " times; the hang check's exits before: ", 0
s_win1:    db "bochstest: hlt-window: interrupt-window exits ", 0
s_win2:    db "; the hang check's exits before: ", 0
s_j1:      db "bochstest: tsc-deadline: vector 0x60 taken ", 0
s_j2:      db " times; IA32_TSC_DEADLINE armed ", 0
s_j3:      db ", reads ", 0
s_j4:      db " after it; taken ", 0
s_j5:      db " times after the LVT masked", 10, 0
s_opt_sipi: db "bochstest=sipi-once", 0
s_sipi1:   db "bochstest: sipi-once: started ", 0
s_sipi2:   db " of ", 0
s_sipi3:   db "; the AP's count ", 0
s_sipi4:   db "; first round not seen: ", 0
s_sipi_nopage: db "bochstest: sipi-once: no e820 RAM page below 0xa0000", 10, 0
s_sipi_notbsp: db "bochstest: sipi-once: not on APIC ID 0", 10, 0
s_done:    db "bochstest: done", 10, 0
s_shutdown: db "Shutdown", 0
s_refused: db "bochstest: HC_HV_BOCHSTEST refused (bochstest=1 missing?)", 10, 0
s_exc:     db "bochstest: exception ", 0

align 16
idtr:	dw 256 * 16 - 1
	dq 0
align 16
idt:	times 256 * 16 db 0
counts:	times 256 dq 0
ifoff:	dq 0
virq_ifoff: dq 0
virq_after: dq 0
ud_count:  dq 0
exc_stack: dq 0
exc_exits: dq 0
entry_exits: dq 0
vhlt_taken: dq 0
hv_wakes:  dq 0
win_exits: dq 0
win_wakes: dq 0
boot_params: dq 0
j_armed:   dq 0
j_after:   dq 0
j_first:   dq 0
j_taken:   dq 0
	times 4096 db 0
stack_top:
	times (16 - ($ - pm_start) % 16) % 16 db 0   ; syssize counts 16-byte units
pm_end:
