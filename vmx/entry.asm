; VM entry and the VM-exit stub: save guest GPRs, call C, restore, VMRESUME.
; Offsets follow struct guest_regs (vmx/vcpu.h, pinned by _Static_assert).
default rel
bits 64
section .text
extern vmx_exit_handler
extern vmx_resume_failed
global vmx_launch, vmx_exit_stub

%macro LOAD_GUEST 0          ; rax = &regs
	mov rbx, [rax + 8]
	mov rcx, [rax + 16]
	mov rdx, [rax + 24]
	mov rsi, [rax + 32]
	mov rdi, [rax + 40]
	mov rbp, [rax + 48]
	mov r8,  [rax + 56]
	mov r9,  [rax + 64]
	mov r10, [rax + 72]
	mov r11, [rax + 80]
	mov r12, [rax + 88]
	mov r13, [rax + 96]
	mov r14, [rax + 104]
	mov r15, [rax + 112]
	mov rax, [rax]
%endmacro

; int vmx_launch(struct guest_regs *r): returns only when VMLAUNCH fails.
vmx_launch:
	push rbx
	push rbp
	push r12
	push r13
	push r14
	push r15
	mov rax, rdi
	LOAD_GUEST
	vmlaunch
	mov eax, 2              ; VMfailValid
	mov ecx, 1              ; VMfailInvalid (CF)
	cmovc eax, ecx
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbp
	pop rbx
	ret

; HOST_RSP points at a slot holding &regs; HOST_RIP is here.
vmx_exit_stub:
	push rax
	mov rax, [rsp + 8]
	mov [rax + 8], rbx
	mov [rax + 16], rcx
	mov [rax + 24], rdx
	mov [rax + 32], rsi
	mov [rax + 40], rdi
	mov [rax + 48], rbp
	mov [rax + 56], r8
	mov [rax + 64], r9
	mov [rax + 72], r10
	mov [rax + 80], r11
	mov [rax + 88], r12
	mov [rax + 96], r13
	mov [rax + 104], r14
	mov [rax + 112], r15
	pop rbx
	mov [rax], rbx
	mov rdi, rax
	cld
	call vmx_exit_handler
	mov rax, [rsp]
	LOAD_GUEST
	vmresume
	mov rdi, [rsp]
	call vmx_resume_failed
.hang:
	hlt
	jmp .hang

section .note.GNU-stack noalloc noexec nowrite progbits
