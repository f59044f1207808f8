; Exception and interrupt entry stubs (vectors 0-255): push a uniform frame
; (vector, error code, GPRs) and call trap_handler.
default rel
bits 64
section .text
extern trap_handler
global isr_common

%macro ISR 1
isr_%1:
%if %1 = 8 || (%1 >= 10 && %1 <= 14) || %1 = 17 || %1 = 21
%else
	push 0                  ; no error code from the CPU
%endif
	push %1
	jmp isr_common
%endmacro

%assign v 0
%rep 256
ISR v
%assign v v+1
%endrep

isr_common:
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	mov rdi, rsp
	mov rbx, rsp
	and rsp, -16
	cld
	call trap_handler
	mov rsp, rbx
	pop r15
	pop r14
	pop r13
	pop r12
	pop r11
	pop r10
	pop r9
	pop r8
	pop rbp
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	add rsp, 16
	iretq

section .data
global isr_stubs
align 8
isr_stubs:
%assign v 0
%rep 256
	dq isr_ %+ v
%assign v v+1
%endrep

section .note.GNU-stack noalloc noexec nowrite progbits
