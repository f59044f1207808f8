# Sourced by tools/guest-kernel.sh and tools/mkinitrd.sh.
# is_static FILE: true when FILE is an executable ELF without a program interpreter.
is_static() {
	[ -f "$1" ] && [ -x "$1" ] || return 1
	if command -v readelf >/dev/null 2>&1; then
		! readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
	elif command -v file >/dev/null 2>&1; then
		file -L "$1" | grep -q 'statically linked'
	else
		ldd "$1" 2>&1 | grep -q 'not a dynamic executable'
	fi
}
