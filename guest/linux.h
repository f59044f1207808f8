/* Linux x86 boot protocol loader: validates a bzImage, places the protected-mode
 * kernel, the initrd, the command line and the zero page (struct boot_params) in
 * guest memory, and builds the guest's e820 table. The guest is entered at the
 * 64-bit entry point (entry64) with RSI = boot_params, in long mode with an
 * identity map covering the kernel, the zero page and the command line
 * (Documentation/arch/x86/boot.rst, "64-bit Boot Protocol").
 *
 * Memory is identity-mapped: a physical address is used as a pointer. */
#ifndef GUEST_LINUX_H
#define GUEST_LINUX_H
#include "../lib/types.h"
#include "../lib/memmap.h"

/* ---- setup header (boot.rst), at offset 0x1F1 of the image and of the zero page ---- */
struct setup_header {
	uint8_t setup_sects;           /* 0x1F1 */
	uint16_t root_flags;           /* 0x1F2 */
	uint32_t syssize;              /* 0x1F4 */
	uint16_t ram_size;             /* 0x1F8 */
	uint16_t vid_mode;             /* 0x1FA */
	uint16_t root_dev;             /* 0x1FC */
	uint16_t boot_flag;            /* 0x1FE */
	uint16_t jump;                 /* 0x200 */
	uint32_t header;               /* 0x202 "HdrS" */
	uint16_t version;              /* 0x206 */
	uint32_t realmode_swtch;       /* 0x208 */
	uint16_t start_sys_seg;        /* 0x20C */
	uint16_t kernel_version;       /* 0x20E */
	uint8_t type_of_loader;        /* 0x210 */
	uint8_t loadflags;             /* 0x211 */
	uint16_t setup_move_size;      /* 0x212 */
	uint32_t code32_start;         /* 0x214 */
	uint32_t ramdisk_image;        /* 0x218 */
	uint32_t ramdisk_size;         /* 0x21C */
	uint32_t bootsect_kludge;      /* 0x220 */
	uint16_t heap_end_ptr;         /* 0x224 */
	uint8_t ext_loader_ver;        /* 0x226 */
	uint8_t ext_loader_type;       /* 0x227 */
	uint32_t cmd_line_ptr;         /* 0x228 */
	uint32_t initrd_addr_max;      /* 0x22C */
	uint32_t kernel_alignment;     /* 0x230 */
	uint8_t relocatable_kernel;    /* 0x234 */
	uint8_t min_alignment;         /* 0x235 */
	uint16_t xloadflags;           /* 0x236 */
	uint32_t cmdline_size;         /* 0x238 */
	uint32_t hardware_subarch;     /* 0x23C */
	uint64_t hardware_subarch_data; /* 0x240 */
	uint32_t payload_offset;       /* 0x248 */
	uint32_t payload_length;       /* 0x24C */
	uint64_t setup_data;           /* 0x250 */
	uint64_t pref_address;         /* 0x258 */
	uint32_t init_size;            /* 0x260 */
	uint32_t handover_offset;      /* 0x264 */
	uint32_t kernel_info_offset;   /* 0x268 */
} __packed;

#define SETUP_HDR_OFFSET 0x1F1
#define SETUP_HDR_MAGIC 0x53726448u /* "HdrS" */
#define BOOT_FLAG_MAGIC 0xAA55

/* loadflags */
#define LOADED_HIGH BIT(0)
#define KASLR_FLAG BIT(1)
#define QUIET_FLAG BIT(5)
#define KEEP_SEGMENTS BIT(6)
#define CAN_USE_HEAP BIT(7)
/* xloadflags */
#define XLF_KERNEL_64 BIT(0)
#define XLF_CAN_BE_LOADED_ABOVE_4G BIT(1)

#define E820_MAX_ENTRIES_ZEROPAGE 128
#define E820_TYPE_RAM 1
#define E820_TYPE_RESERVED 2
#define E820_TYPE_ACPI 3
#define E820_TYPE_NVS 4
#define E820_TYPE_UNUSABLE 5

struct boot_e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
} __packed;

/* ---- the zero page (zero-page.rst) ---- */
struct boot_params {
	uint8_t screen_info[0x40];             /* 0x000 */
	uint8_t apm_bios_info[0x14];           /* 0x040 */
	uint8_t _pad2[4];                      /* 0x054 */
	uint64_t tboot_addr;                   /* 0x058 */
	uint8_t ist_info[0x10];                /* 0x060 */
	uint64_t acpi_rsdp_addr;               /* 0x070 */
	uint8_t _pad3[8];                      /* 0x078 */
	uint8_t hd0_info[0x10];                /* 0x080 */
	uint8_t hd1_info[0x10];                /* 0x090 */
	uint8_t sys_desc_table[0x10];          /* 0x0A0 */
	uint8_t olpc_ofw_header[0x10];         /* 0x0B0 */
	uint32_t ext_ramdisk_image;            /* 0x0C0 */
	uint32_t ext_ramdisk_size;             /* 0x0C4 */
	uint32_t ext_cmd_line_ptr;             /* 0x0C8 */
	uint8_t _pad4[0x13C - 0x0CC];          /* 0x0CC */
	uint32_t cc_blob_address;              /* 0x13C */
	uint8_t edid_info[0x80];               /* 0x140 */
	uint8_t efi_info[0x20];                /* 0x1C0 */
	uint32_t alt_mem_k;                    /* 0x1E0 */
	uint32_t scratch;                      /* 0x1E4 */
	uint8_t e820_entries;                  /* 0x1E8 */
	uint8_t eddbuf_entries;                /* 0x1E9 */
	uint8_t edd_mbr_sig_buf_entries;       /* 0x1EA */
	uint8_t kbd_status;                    /* 0x1EB */
	uint8_t secure_boot;                   /* 0x1EC */
	uint8_t _pad5[2];                      /* 0x1ED */
	uint8_t sentinel;                      /* 0x1EF */
	uint8_t _pad6[1];                      /* 0x1F0 */
	struct setup_header hdr;               /* 0x1F1 */
	uint8_t _pad7[0x290 - 0x1F1 - sizeof(struct setup_header)];
	uint32_t edd_mbr_sig_buffer[16];       /* 0x290 */
	struct boot_e820_entry e820_table[E820_MAX_ENTRIES_ZEROPAGE]; /* 0x2D0 */
	uint8_t _pad8[0xD00 - 0xCD0];          /* 0xCD0 */
	uint8_t eddbuf[0x1EC];                 /* 0xD00 */
	uint8_t _pad9[0x1000 - 0xEEC];         /* 0xEEC */
} __packed;

/* What the loader decided. */
struct linux_image {
	paddr_t kernel_src; uint64_t kernel_size;  /* the bzImage as loaded by the boot loader */
	uint16_t version;           /* boot protocol version (0x020F = 2.15) */
	uint32_t setup_size;        /* (setup_sects+1)*512 */
	paddr_t pm_entry_addr;      /* where the protected-mode kernel was copied (its load address) */
	uint64_t pm_size;
	paddr_t entry64;            /* pm_entry_addr + 0x200: the 64-bit entry */
	paddr_t boot_params;        /* the zero page we built */
	paddr_t cmdline;
	paddr_t initrd; uint64_t initrd_size;
	uint64_t init_size, pref_address, kernel_alignment; bool relocatable;
	/* From the header, for the layout decisions and linux_print(). */
	uint8_t loadflags;
	uint16_t xloadflags;
	uint32_t cmdline_size;      /* longest command line the kernel takes, without the NUL */
	uint32_t initrd_addr_max;   /* highest address the initrd may occupy (unless above-4G is allowed) */
	bool initrd_moved;          /* the initrd was copied away from where the boot loader put it */
	uint32_t e820_entries;      /* entries written to the zero page */
};

/* Validates a bzImage: size sanity, boot_flag 0xAA55 at 0x1FE, "HdrS" at 0x202,
 * protocol >= 2.12, LOADED_HIGH, xloadflags XLF_KERNEL_64 (64-bit entry at
 * +0x200), setup_sects (0 means 4). Fills the header-derived fields of li
 * (kernel_src is the image's address). On error returns -1 and writes a message
 * into err. */
int linux_check(const void *image, uint64_t size, struct linux_image *li, char *err, size_t errlen);

/* Lays out the guest (see linux.c for the rules): copies the protected-mode
 * kernel to its load address, keeps or moves the initrd, writes the command
 * line at cmdline_pa and the zero page at zero_page (with the e820 table built
 * from mem, MEM_HV ranges shown as reserved). rsdp = 0: none given. Returns 0,
 * or -1 with a message in err (nothing is written to guest memory before every
 * check has passed). */
int linux_load(struct linux_image *li, const struct memmap *mem, paddr_t kernel_src, uint64_t kernel_size,
	       paddr_t initrd_src, uint64_t initrd_size, bool initrd_required, const char *cmdline,
	       paddr_t zero_page, paddr_t cmdline_pa, paddr_t rsdp, char *err, size_t errlen);

/* pr_info's the layout. */
void linux_print(const struct linux_image *li);

/* e820 type for a memmap type (MEM_HV and unknown types: reserved). */
uint32_t linux_e820_type(uint32_t mem_type);
#endif
