/* UEFI entry (GNU-EFI): reads \hv\hv.cfg and the guest's files from the stick,
 * reserves the hypervisor's memory, leaves boot services and hands a
 * boot_info to hv_main. Nothing calls UEFI after ExitBootServices.
 *
 * \hv\hv.cfg, one key=value per line ('#' starts a comment):
 *   options=<hypervisor options>   (the shell's load options are appended)
 *   kernel=\hv\vmlinuz  initrd=\hv\initrd  cmdline=<guest kernel command line> */
#include <efi.h>
#include <efilib.h>
#include "main.h"
#include "cfg.h"
#include "../lib/string.h"
#include "../lib/printk.h"
#include "../lib/serial.h"
#include "../lib/options.h"

#define HV_EFI_HEAP MIB(48)
#define CFG_PATH L"\\hv\\hv.cfg"

static struct boot_info bi;

static EFI_STATUS read_file(EFI_FILE_HANDLE root, const char *path, paddr_t *addr, uint64_t *size, bool below4g)
{
	CHAR16 wpath[256];
	EFI_FILE_HANDLE fh;
	size_t i;
	/* path is NUL-terminated (a literal, or a copy from hv.cfg); at most 255 characters are taken. */
	size_t plen = strlen(path) < 255 ? strlen(path) : 255;
	for (i = 0; i < plen; i++)
		wpath[i] = path[i] == '/' ? '\\' : path[i];
	wpath[i] = 0;
	EFI_STATUS st = uefi_call_wrapper(root->Open, 5, root, &fh, wpath, EFI_FILE_MODE_READ, 0);
	if (EFI_ERROR(st))
		return st;
	EFI_FILE_INFO *info = LibFileInfo(fh);
	if (!info) {
		uefi_call_wrapper(fh->Close, 1, fh);
		return EFI_DEVICE_ERROR;
	}
	UINTN n = info->FileSize;
	FreePool(info);
	EFI_PHYSICAL_ADDRESS pa = below4g ? 0xffffffff : ~0ull;
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress, EfiLoaderData,
			       EFI_SIZE_TO_PAGES(n + 1), &pa);
	if (!EFI_ERROR(st)) {
		st = uefi_call_wrapper(fh->Read, 3, fh, &n, (void *)(uintptr_t)pa);
		((char *)(uintptr_t)pa)[n] = 0;
		*addr = pa;
		*size = n;
	}
	uefi_call_wrapper(fh->Close, 1, fh);
	return st;
}

/* console= of a command line, else COM1 (hv_main follows the SPCR later). */
static const struct uart_desc *early_console(const char *line)
{
	static struct uart_desc d;
	uart_desc_com(&d, COM1_PORT);
	options_console(line, &d);
	return &d;
}

static void load_config(EFI_FILE_HANDLE root)
{
	paddr_t cfg_text = 0;
	uint64_t cfg_size = 0;
	static struct hv_cfg cfg;

	if (EFI_ERROR(read_file(root, "\\hv\\hv.cfg", &cfg_text, &cfg_size, true))) {
		pr_info("efi: no \\hv\\hv.cfg on the boot device; defaults, no guest\n");
		return;
	}
	int bad = cfg_parse((const char *)(uintptr_t)cfg_text, cfg_size, &cfg, bi.boot_error, sizeof bi.boot_error);
	/* The options before a bad line still count (exit= ends a test run). */
	memcpy(bi.cmdline, cfg.options, sizeof bi.cmdline);
	memcpy(bi.guest_cmdline, cfg.cmdline, sizeof bi.guest_cmdline);
	if (bad)
		return;   /* the run's end, with the message (hv_main) */
	const char *kernel = cfg.kernel, *initrd = cfg.initrd;
	/* A file hv.cfg names and the stick does not give is the run's end,
	 * with a failing verdict (hv_main), never a guest-less "pass". */
	if (kernel[0] && EFI_ERROR(read_file(root, kernel, &bi.kernel.addr, &bi.kernel.size, false)))
		snprintf(bi.boot_error, sizeof bi.boot_error, "efi: kernel '%s' named in hv.cfg could not be read", kernel);
	else if (initrd[0] && EFI_ERROR(read_file(root, initrd, &bi.initrd.addr, &bi.initrd.size, true)))
		snprintf(bi.boot_error, sizeof bi.boot_error, "efi: initrd '%s' named in hv.cfg could not be read", initrd);
	else
		pr_info("efi: hv.cfg: kernel %s (%llu bytes), initrd %s (%llu bytes)\n", kernel[0] ? kernel : "-",
			(unsigned long long)bi.kernel.size, initrd[0] ? initrd : "-", (unsigned long long)bi.initrd.size);
}

static uint32_t efi_mem_type(UINT32 t)
{
	switch (t) {
	case EfiLoaderCode: case EfiLoaderData: case EfiBootServicesCode:
	case EfiBootServicesData: case EfiConventionalMemory:
		return MEM_USABLE;
	case EfiACPIReclaimMemory: return MEM_ACPI;
	case EfiACPIMemoryNVS: return MEM_NVS;
	case EfiUnusableMemory: return MEM_BAD;
	default: return MEM_RESERVED;
	}
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	EFI_LOADED_IMAGE *li;
	EFI_PHYSICAL_ADDRESS pa;

	InitializeLib(image, st);
	bi.loader = "uefi";
	uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol, (void **)&li);
	EFI_FILE_HANDLE root = LibOpenRoot(li->DeviceHandle);

	/* Load options from the shell come after hv.cfg's options (later ones win). */
	char opts[BOOT_CMDLINE_MAX] = "";
	CHAR16 *lo = li->LoadOptions;
	for (UINTN i = 0; lo && i < li->LoadOptionsSize / 2 && lo[i] && i + 1 < sizeof opts; i++)
		opts[i] = lo[i] < 128 ? (char)lo[i] : '?';
	serial_init_desc(early_console(opts));
	if (root)
		load_config(root);
	serial_init_desc(early_console(bi.cmdline));
	/* A shell passes the program name first; keep only key=value words. */
	for (char *w = opts; *w;) {
		char *e = w;
		while (*e && *e != ' ')
			e++;
		bool kv = false;
		for (char *c = w; c < e; c++)
			kv |= *c == '=';
		if (kv)
			cfg_append(bi.cmdline, sizeof bi.cmdline, w, e - w);
		w = *e ? e + 1 : e;
	}

	void *rsdp = NULL;
	EFI_GUID acpi20 = ACPI_20_TABLE_GUID;
	if (EFI_ERROR(LibGetSystemConfigurationTable(&acpi20, &rsdp)))
		LibGetSystemConfigurationTable(&AcpiTableGuid, &rsdp);
	bi.rsdp = (paddr_t)(uintptr_t)rsdp;

	pa = 0xffffffff;
	if (EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress, EfiLoaderData,
					EFI_SIZE_TO_PAGES(HV_EFI_HEAP), &pa))) {
		Print(L"hv: cannot allocate the hypervisor heap below 4 GiB\n");
		return EFI_OUT_OF_RESOURCES;
	}
	bi.heap_start = pa;
	bi.heap_end = pa + HV_EFI_HEAP;
	pa = 0x9f000;
	if (!EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress, EfiLoaderData, 1, &pa)))
		bi.trampoline = pa;
	bi.image_start = ALIGN_DOWN((paddr_t)(uintptr_t)li->ImageBase, PAGE_SIZE);
	bi.image_end = ALIGN_UP((paddr_t)(uintptr_t)li->ImageBase + li->ImageSize, PAGE_SIZE);

	/* ExitBootServices: the map key must be current, so fetch the map and exit in a loop. */
	UINTN map_size = 0, key, desc_size;
	UINT32 desc_ver;
	EFI_MEMORY_DESCRIPTOR *map = NULL;
	EFI_STATUS s = EFI_BUFFER_TOO_SMALL;
	for (int tries = 0; tries < 8; tries++) {
		s = uefi_call_wrapper(BS->GetMemoryMap, 5, &map_size, map, &key, &desc_size, &desc_ver);
		if (s == EFI_BUFFER_TOO_SMALL) {
			if (map)
				FreePool(map);
			map_size += 8 * sizeof(EFI_MEMORY_DESCRIPTOR) + 4096;
			map = AllocatePool(map_size);
			if (!map) {
				Print(L"hv: no pool memory for the UEFI memory map (%lu bytes)\n", (unsigned long)map_size);
				return EFI_OUT_OF_RESOURCES;
			}
			continue;
		}
		if (EFI_ERROR(s))
			break;
		s = uefi_call_wrapper(BS->ExitBootServices, 2, image, key);
		if (!EFI_ERROR(s))
			break;
	}
	if (EFI_ERROR(s) || !map) {
		Print(L"hv: ExitBootServices failed: %r\n", s);
		return EFI_ERROR(s) ? s : EFI_LOAD_ERROR;
	}
	__asm__ volatile("cli");

	/* Boot services are gone. The loaded files stay out of the heap search. */
	for (UINTN off = 0; off + desc_size <= map_size; off += desc_size) {
		EFI_MEMORY_DESCRIPTOR *d = (void *)((uint8_t *)map + off);
		if (!memmap_add(&bi.mem, d->PhysicalStart, d->NumberOfPages * 4096, efi_mem_type(d->Type)) &&
		    !bi.boot_error[0])
			snprintf(bi.boot_error, sizeof bi.boot_error,
				 "efi: the UEFI memory map has more ranges than the hypervisor's table holds (%u after merging neighbours; descriptor %llu of %llu)",
				 (unsigned)MEMMAP_MAX, (unsigned long long)(off / desc_size), (unsigned long long)(map_size / desc_size));
	}
	if (bi.kernel.size)
		memmap_add(&bi.mem, bi.kernel.addr, ALIGN_UP(bi.kernel.size + 1, PAGE_SIZE), MEM_BOOT);
	if (bi.initrd.size)
		memmap_add(&bi.mem, bi.initrd.addr, ALIGN_UP(bi.initrd.size + 1, PAGE_SIZE), MEM_BOOT);
	hv_main(&bi);
}
