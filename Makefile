# One tree, two images: build/hv.elf (Multiboot2, for GRUB) and build/hv.efi
# (UEFI application). `make help` lists the targets.

CC      ?= gcc
NASM    ?= nasm
LD      ?= ld
OBJCOPY ?= objcopy
B       := build
# V=1 shows the commands.
Q       := $(if $(V),,@)

# Sources, per folder (shared by both images).
BOOT_SRCS := boot/main.c boot/smp.c boot/probe.c boot/probe_verdict.c
LIB_SRCS  := lib/hist.c lib/string.c lib/printk.c lib/serial.c lib/memmap.c lib/options.c lib/spcr.c lib/acpi.c lib/mcfg.c \
             lib/desc.c lib/trap.c lib/percpu.c lib/paging.c lib/tsc.c lib/tsc_choose.c lib/tsc_ref.c lib/tsc_skew.c lib/tsc_sync.c lib/cpusum.c lib/acpi_print.c lib/power.c lib/panic.c lib/canary.c lib/mtrr.c \
             lib/dmar.c lib/srat.c lib/nodemem.c
APIC_SRCS := apic/lapic.c apic/pi.c apic/vapic.c apic/swapic.c apic/ioapic.c apic/level.c apic/vhpet.c apic/vioapic.c
PCI_SRCS  := pci/bar.c pci/bridge.c pci/alias.c pci/fn.c pci/route.c pci/place.c pci/scan.c pci/msi.c pci/msix.c pci/sriov.c pci/bridge_write.c pci/cfg.c
IPI_SRCS  := ipi/ipi.c
TIMER_SRCS := timer/vtimer.c timer/service.c
IOMMU_SRCS := iommu/tables.c iommu/vtd.c iommu/iommu.c iommu/irte.c
VMX_SRCS  := vmx/caps.c vmx/tiers.c vmx/vmxon.c vmx/vmcs.c vmx/vmcs_ops.c vmx/ept.c vmx/exit.c vmx/exit_ept.c vmx/hpet_trap.c vmx/vcpu.c vmx/vcpu_launch.c \
             vmx/report.c vmx/virq.c vmx/virq_apic.c vmx/virq_ipi.c vmx/virq_timer.c vmx/virq_report.c vmx/virq_startup.c vmx/tsc.c \
             vmx/exit_io.c vmx/vconsole.c vmx/event.c vmx/forced.c vmx/setup.c vmx/hang.c vmx/virq_hang.c vmx/vioapic_trap.c vmx/msi_trap.c vmx/msi_trap_report.c vmx/ept_sync.c vmx/ept_live.c
GUEST_SRCS := guest/startup.c guest/linux.c guest/boot.c guest/setup.c guest/cpuid.c guest/msr.c guest/io.c guest/hypercall.c \
              guest/acpi.c guest/gwalk.c guest/vuart.c guest/mmio.c guest/mmio_width.c
# The in-image test aids (testaid/: iommutest=, bochstest=; docs/layout.md),
# reached only through boot/aids.c. In by default: make test runs them.
# TEST_AIDS=0 leaves them out (boot/aids_none.c refuses those options by
# name), for a build meant for a real machine; use another B= for it.
TEST_AIDS ?= 1
TESTAID_SRCS := testaid/irtest.c testaid/edutest.c testaid/preon.c testaid/msi_edutest.c testaid/msi_sriovtest.c testaid/bochstest.c
AIDS_SRCS := $(if $(filter 0,$(TEST_AIDS)),boot/aids_none.c,boot/aids.c $(TESTAID_SRCS))
CORE_SRCS := $(BOOT_SRCS) $(LIB_SRCS) $(APIC_SRCS) $(PCI_SRCS) $(IPI_SRCS) $(TIMER_SRCS) $(IOMMU_SRCS) $(VMX_SRCS) $(GUEST_SRCS) $(AIDS_SRCS)
CORE_ASM  := lib/isr.asm boot/trampoline_blob.asm vmx/entry.asm
MB2_SRCS  := boot/multiboot2.c boot/mb2_info.c
MB2_ASM   := boot/mb2_entry.asm
EFI_SRCS  := boot/efi.c boot/cfg.c

# Host unit tests: the same files, built for the host with sanitizers.
UNIT_SRCS := boot/aids_none.c apic/level.c apic/vhpet.c apic/vioapic.c $(PCI_SRCS) guest/mmio_width.c guest/startup.c vmx/virq.c vmx/virq_apic.c vmx/virq_ipi.c vmx/virq_timer.c vmx/virq_report.c vmx/virq_startup.c vmx/tsc.c \
             vmx/hang.c vmx/virq_hang.c vmx/ept_sync.c vmx/ept_live.c lib/hist.c lib/string.c lib/memmap.c lib/options.c lib/spcr.c lib/serial.c lib/acpi.c lib/mcfg.c lib/mtrr.c vmx/caps.c vmx/tiers.c guest/linux.c \
             vmx/vmcs.c vmx/vmcs_ops.c vmx/event.c boot/mb2_info.c apic/pi.c apic/vapic.c apic/swapic.c ipi/ipi.c timer/vtimer.c timer/service.c vmx/ept.c guest/cpuid.c guest/msr.c guest/io.c guest/hypercall.c guest/acpi.c guest/gwalk.c guest/vuart.c guest/mmio.c boot/cfg.c \
             boot/probe_verdict.c lib/paging.c lib/dmar.c lib/srat.c lib/nodemem.c lib/tsc_choose.c lib/tsc_ref.c lib/tsc_skew.c lib/tsc_sync.c lib/cpusum.c lib/acpi_print.c iommu/tables.c iommu/irte.c iommu/iommu.c iommu/vtd.c $(wildcard test/unit/*.c)

WARN    := -Wall -Wextra -Werror
FREE    := -std=gnu11 -O2 -g -ffreestanding -fno-stack-protector -mno-red-zone -mgeneral-regs-only \
           -fno-common -fno-builtin -fno-asynchronous-unwind-tables -nostdinc \
           -isystem $(shell $(CC) -print-file-name=include) $(WARN)
MB2_CFLAGS := $(FREE) -MMD -MP -fno-pie -mcmodel=small
EFI_INC := /usr/include/efi
EFI_CFLAGS := $(FREE) -MMD -MP -fpic -fshort-wchar -DGNU_EFI_USE_MS_ABI -I$(EFI_INC) -I$(EFI_INC)/x86_64
EFI_LIB := /usr/lib
HOST_CFLAGS := -std=gnu11 -g -O1 -DHV_HOST_TEST -fsanitize=address,undefined -fno-omit-frame-pointer $(WARN)

MB2_OBJS := $(patsubst %.c,$(B)/mb2/%.o,$(CORE_SRCS) $(MB2_SRCS)) $(patsubst %.asm,$(B)/mb2/%.o,$(CORE_ASM) $(MB2_ASM))
EFI_OBJS := $(patsubst %.c,$(B)/efi/%.o,$(CORE_SRCS) $(EFI_SRCS)) $(patsubst %.asm,$(B)/efi/%.o,$(CORE_ASM))

.PHONY: all help run test soak test-unit test-qemu test-bochs test-linux usb iso deb test-deb qemu qemu-kvm test-nested deps clean bench bench-vtd bench-seeds bench-boot fuzz fuzz-build lint lint-includes
all: $(B)/hv.elf $(B)/hv.efi

help:
	@echo "make            build build/hv.elf (Multiboot2) and build/hv.efi (UEFI)"
	@echo "make run        build, boot hv.elf and Debian's kernel on 2 CPUs on the project's patched Bochs 3.0 (built once),"
	@echo "                show the console (RUN_BOCHS=stock: Debian's Bochs 3.0, whose defect H kills some 2-CPU boots)"
	@echo "make test       unit tests, lint, fuzzing (10 s a target), QEMU+OVMF (UEFI), Bochs 3.0 and Linux runs, make run;"
	@echo "                ends 'N passed, N failed' (docs/testing.md)"
	@echo "make test-unit  only the host unit tests"
	@echo "make test-qemu  only the UEFI boot under QEMU+OVMF"
	@echo "make test-bochs only the Bochs 3.0 platform runs (no guest)"
	@echo "make test-linux only Linux under the hypervisor in Bochs 3.0 (22 runs: both models, the IPI and timer tiers, partition,"
	@echo "                4 and 8 vCPUs, CPU hotplug, the hostile guest, a guest that panics and one that halts, make run)"
	@echo "make soak       SOAK_BOOTS (default 49, about an hour; 100 about two) Linux boots through the tiers, no retries, then one boot of 10^6 IPIs"
	@echo "make lint       the include layers (tools/check-includes.py), cppcheck and clang-tidy over the sources"
	@echo "make fuzz       each fuzz target for FUZZ_LONG seconds (default 600), corpus in build/fuzz/"
	@echo "make usb        build/usb.img: FAT stick with \\EFI\\BOOT\\BOOTX64.EFI and \\hv\\hv.cfg"
	@echo "                (KERNEL=path INITRD=path GUEST_CMDLINE='...' HV_CMDLINE='...' to add a guest)"
	@echo "make deb        build/hv_VERSION_amd64.deb: hv in /boot and an /etc/grub.d entry per kernel (docs/usage.md, man 7 hv)"
	@echo "make test-deb   the package installed on a Debian disk (apt, update-grub), booted under hv in Bochs (GRUB) and its UEFI entry under QEMU+OVMF, a kernel upgrade, removal (~10 min)"
	@echo "make iso        build/hv.iso: GRUB (Multiboot2) image for Bochs or a CD"
	@echo "make qemu       boot the UEFI path under QEMU+OVMF with 4 CPUs"
	@echo "make deps       install the Debian packages the build and tests need"
	@echo "make qemu-kvm   boot build/usb.img under QEMU with KVM and nested VMX (an Intel host with VT-x only; says so elsewhere)"
	@echo "make test-nested  CI's nested level: hv under KVM's nested VMX in Linux on the patched Bochs, UEFI and Multiboot2 (about 25 minutes; not in make test)"
	@echo "make bench      the tiers against bare metal in Bochs: IPI round trip, send-IPI bench, cyclictest, hackbench,"
	@echo "                exits per operation; writes docs/results.md (BENCH_RUNS=N, BENCH_ONLY=REGEX; about 20 min a run)"
	@echo "make bench-vtd  device interrupts through the patched Bochs's VT-d units: exits per interrupt, latency posted,"
	@echo "                remapped and bare (BENCH_RUNS=N boots of each, default 3; also run by make bench)"
	@echo "make bench-seeds the EOI and timer seed experiments; make bench-boot: boot time bare and under hv"
	@echo "make clean      remove build/"

deps:
	@tools/deps.sh

$(B)/mb2/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $@"
	$(Q)$(CC) $(MB2_CFLAGS) -c $< -o $@
$(B)/efi/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $@"
	$(Q)$(CC) $(EFI_CFLAGS) -c $< -o $@
$(B)/trampoline.bin: boot/trampoline.asm
	@mkdir -p $(B)
	$(Q)$(NASM) -f bin $< -o $@
$(B)/mb2/boot/trampoline_blob.o $(B)/efi/boot/trampoline_blob.o: $(B)/trampoline.bin
$(B)/mb2/%.o: %.asm
	@mkdir -p $(dir $@)
	$(Q)$(NASM) -f elf64 -DTRAMPOLINE_BIN='"$(B)/trampoline.bin"' $< -o $@
$(B)/efi/%.o: %.asm
	@mkdir -p $(dir $@)
	$(Q)$(NASM) -f elf64 -DTRAMPOLINE_BIN='"$(B)/trampoline.bin"' $< -o $@

$(B)/hv.elf: $(MB2_OBJS) linker.ld
	@echo "  LD    $@"
	$(Q)$(LD) -n -nostdlib -static -z max-page-size=0x1000 --no-warn-rwx-segments -z noexecstack -T linker.ld -o $@ $(MB2_OBJS)

$(B)/hv.so: $(EFI_OBJS)
	@echo "  LD    $@"
	$(Q)$(LD) -nostdlib -znocombreloc -T $(EFI_LIB)/elf_x86_64_efi.lds -shared -Bsymbolic \
	    -L$(EFI_LIB) $(EFI_LIB)/crt0-efi-x86_64.o $(EFI_OBJS) -o $@ -lefi -lgnuefi
$(B)/hv.efi: $(B)/hv.so
	@echo "  EFI   $@"
	$(Q)$(OBJCOPY) -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel -j .rela -j .reloc \
	    --target efi-app-x86_64 --subsystem=10 $< $@

$(B)/unit: $(UNIT_SRCS) $(wildcard lib/*.h vmx/*.h guest/*.h apic/*.h pci/*.h ipi/*.h timer/*.h iommu/*.h test/unit/*.h) tools/bochs-patch/vtd_core.h
	@mkdir -p $(B)
	@echo "  HOSTCC $@"
	$(Q)$(CC) $(HOST_CFLAGS) -o $@ $(UNIT_SRCS)

# The patched Bochs's VT-d unit as a device (tools/bochs-patch/vtd.cc with
# test/unit/vtd_host.h for Bochs): a C++ host test beside the C ones.
$(B)/vtd-device: test/unit/vtd_device_test.cc test/unit/host_cxx.h test/unit/vtd_device_strict.inc test/unit/vtd_host.h tools/bochs-patch/vtd.cc \
                 tools/bochs-patch/vtd.h tools/bochs-patch/vtd_core.h tools/bochs-patch/vtd_strict.h
	@mkdir -p $(B)
	@echo "  HOSTCXX $@"
	$(Q)$(CXX) -std=gnu++11 -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer $(WARN) -Itest/unit -o $@ test/unit/vtd_device_test.cc

# The patched Bochs's architectural PMU (tools/bochs-patch/pmu.cc, the file
# Bochs links) against the SDM: a C++ host test like vtd-device.
$(B)/bochs-pmu: test/unit/bochs_pmu_test.cc test/unit/host_cxx.h tools/bochs-patch/pmu.cc tools/bochs-patch/pmu.h
	@mkdir -p $(B)
	@echo "  HOSTCXX $@"
	$(Q)$(CXX) -std=gnu++11 -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer $(WARN) -o $@ test/unit/bochs_pmu_test.cc

# The IPI-virtualization model as a command (the agreement test with the
# patched Bochs, test/run-tests.sh level bochs-hv).
$(B)/ipiv-verdict: test/tools/ipiv_verdict.c test/unit/ipiv_model.c test/unit/ipiv_model.h test/unit/sdm_pid.h
	@mkdir -p $(B)
	@echo "  HOSTCC $@"
	$(Q)$(CC) $(HOST_CFLAGS) -o $@ test/tools/ipiv_verdict.c test/unit/ipiv_model.c

# The tiny guest that shows Bochs 3.0's VMX defects (bochstest=1; docs/bochs.md).
$(B)/bochstest.bin: guest/test/bochstest/bochstest.asm
	@mkdir -p $(B)
	@echo "  NASM   $@"
	$(Q)$(NASM) -f bin -o $@ $<

# Fuzzing (libFuzzer, clang with ASan/UBSan): one target per decoder in
# test/fuzz/, seeds in test/fuzz/corpus/NAME/. `make test` runs each for
# FUZZ_SECONDS (test/run-tests.sh, level "fuzz"); `make fuzz` runs each for
# FUZZ_LONG seconds, keeping what it finds in build/fuzz/NAME.corpus.
FUZZ_CC ?= $(shell command -v clang-14 || command -v clang)
FUZZ_TARGETS := options cfg mb2 memmap acpi linux guest dmar irq srat mmio vmsi wall
FUZZ_LIBS := lib/string.c lib/memmap.c lib/options.c lib/spcr.c lib/acpi.c lib/mcfg.c lib/dmar.c lib/srat.c iommu/irte.c guest/mmio.c apic/vioapic.c $(PCI_SRCS) guest/linux.c boot/mb2_info.c ipi/ipi.c apic/pi.c apic/vapic.c \
             guest/hypercall.c guest/msr.c guest/io.c guest/cpuid.c vmx/event.c boot/cfg.c test/fuzz/stubs.c
FUZZ_CFLAGS := -std=gnu11 -g -O1 -DHV_HOST_TEST -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
               -fno-omit-frame-pointer -Wall -Werror

$(B)/fuzz/%: test/fuzz/fuzz_%.c $(FUZZ_LIBS) $(wildcard lib/*.h guest/*.h boot/*.h ipi/*.h apic/*.h pci/*.h vmx/*.h iommu/*.h)
	@mkdir -p $(B)/fuzz
	@test -n "$(FUZZ_CC)" || { echo "fuzz: clang not found (apt-get install clang-14 libclang-rt-14-dev)"; exit 1; }
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIBS) $(FUZZ_EXTRA)

# The wall target also drives the real EPT code (its tables in the
# fuzzer's own pages: test/fuzz/wall_ept.c).
FUZZ_WALL_LIBS := test/fuzz/wall_ept.c vmx/ept.c lib/mtrr.c
$(B)/fuzz/wall: $(FUZZ_WALL_LIBS) test/fuzz/wall_ept.h
$(B)/fuzz/wall: FUZZ_EXTRA = $(FUZZ_WALL_LIBS)

fuzz-build: $(addprefix $(B)/fuzz/,$(FUZZ_TARGETS))

# Static analysis: the layers of the includes (tools/check-includes.py), then
# cppcheck over the hypervisor's sources, clean (warnings and portability
# included); `make test` runs it (level "lint").
lint: lint-includes
	@command -v cppcheck >/dev/null || { echo "lint: cppcheck not found (apt-get install cppcheck)"; exit 1; }
	@command -v clang-tidy-14 >/dev/null || { echo "lint: clang-tidy-14 not found (apt-get install clang-tidy-14)"; exit 1; }
	cppcheck --quiet --enable=warning,portability --inline-suppr --error-exitcode=1 -D__x86_64__ --std=c11 \
	  --template='{file}:{line}: {severity}: {message} [{id}]' boot vmx guest apic pci ipi timer iommu lib testaid
	@echo "  clang-tidy (.clang-tidy) over $(words $(CORE_SRCS) boot/aids_none.c $(MB2_SRCS) $(EFI_SRCS)) files"
	$(Q)printf '%s\n' $(CORE_SRCS) boot/aids_none.c $(MB2_SRCS) | xargs -P$$(nproc) -n4 sh -c \
	  'clang-tidy-14 --quiet "$$@" -- -ffreestanding -fno-builtin -I. -D__x86_64__ -std=gnu11' sh
	$(Q)clang-tidy-14 --quiet $(EFI_SRCS) -- -ffreestanding -fno-builtin -I. -D__x86_64__ -std=gnu11 \
	  -fshort-wchar -DGNU_EFI_USE_MS_ABI -I$(EFI_INC) -I$(EFI_INC)/x86_64

lint-includes:
	$(Q)python3 tools/check-includes.py

FUZZ_LONG ?= 600
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do mkdir -p $(B)/fuzz/$$t.corpus; \
	  echo "== fuzz $$t for $(FUZZ_LONG) s"; \
	  $(B)/fuzz/$$t -max_total_time=$(FUZZ_LONG) -artifact_prefix=$(B)/fuzz/$$t- $(B)/fuzz/$$t.corpus test/fuzz/corpus/$$t || exit 1; done

test-unit: $(B)/unit $(B)/vtd-device $(B)/bochs-pmu
	HV_FIXTURES=test/fixtures $(B)/unit
	$(B)/vtd-device
	$(B)/bochs-pmu

iso: $(B)/hv.elf
	tools/mkiso.sh $(B)/hv.iso $(B)/hv.elf

usb: $(B)/hv.efi
	tools/mkusb.sh $(B)/usb.img $(B)/hv.efi

# The Debian package (tools/mkdeb.sh, tools/deb/): hv in /boot, GRUB's entries.
deb: $(B)/hv.elf $(B)/hv.efi
	tools/mkdeb.sh $(B) $(B)/hv.elf $(B)/hv.efi
# Installed on a Debian disk and booted under hv in Bochs (a CI step of its own).
test-deb:
	B=$(B) test/deb-test.sh

qemu: $(B)/hv.efi
	tools/run-qemu.sh

# CI's nested level (issue 49, its own CI step: too long for make test):
# the hypervisor under KVM's nested VMX, inside Linux on the patched Bochs,
# through tools/run-qemu-kvm.sh's two paths (OVMF and SeaBIOS+GRUB).
test-nested:
	NESTED_MODE=both tools/run-nested.sh

# The stick image under QEMU with KVM and nested VMX (an Intel host with
# kvm_intel nested=1): the host is checked first, before anything is built.
qemu-kvm:
	@tools/run-qemu-kvm.sh --check
	@$(MAKE) --no-print-directory $(B)/hv.efi
	tools/run-qemu-kvm.sh

run: all
	tools/run.sh

test:
	tools/deps.sh
	$(MAKE) all $(B)/unit $(B)/vtd-device $(B)/bochs-pmu $(B)/ipiv-verdict $(B)/bochstest.bin
	test/run-tests.sh

test-qemu: $(B)/hv.efi
	test/run-tests.sh qemu
test-bochs: $(B)/hv.elf $(B)/bochstest.bin
	test/run-tests.sh bochs
soak: $(B)/hv.elf
	tools/deps.sh
	test/run-tests.sh soak

test-linux: $(B)/hv.elf $(B)/ipiv-verdict
	test/run-tests.sh linux

bench: $(B)/hv.elf
	tools/deps.sh
	tools/bench-tiers.sh
	tools/bench-vtd.sh

bench-vtd: $(B)/hv.elf
	tools/deps.sh
	tools/bench-vtd.sh

bench-seeds: $(B)/hv.elf
	tools/deps.sh
	tools/bench-seeds.sh

bench-boot: $(B)/hv.elf
	tools/deps.sh
	tools/bench-boot.sh

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
