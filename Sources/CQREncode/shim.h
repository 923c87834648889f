#ifndef CLAWRELAY_QRENCODE_SHIM_H
#define CLAWRELAY_QRENCODE_SHIM_H
#include <qrencode.h>
#endif
