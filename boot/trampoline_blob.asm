; The assembled AP trampoline, embedded for boot/smp.c to copy below 1 MiB.
section .rodata
global trampoline_blob, trampoline_blob_end
trampoline_blob:
	incbin TRAMPOLINE_BIN
trampoline_blob_end:

section .note.GNU-stack noalloc noexec nowrite progbits
