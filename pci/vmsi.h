/* The PCI model's face to the traps above it (vmx/msi_trap.c and its
 * report, the in-image aids, the unit tests): everything in pci/, top
 * down. Nothing in pci/ includes this file: inside the room each file
 * includes its own header and those below it (docs/layout.md). */
#ifndef PCI_VMSI_H
#define PCI_VMSI_H
#include "cfg.h"
#include "bridge_write.h"
#include "sriov.h"
#include "msix.h"
#include "msi.h"
#include "scan.h"
#include "place.h"
#include "route.h"
#include "fn.h"
#include "alias.h"
#include "bridge.h"
#include "bar.h"
#include "model.h"
#endif
