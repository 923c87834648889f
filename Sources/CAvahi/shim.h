#ifndef CLAWRELAY_AVAHI_SHIM_H
#define CLAWRELAY_AVAHI_SHIM_H
#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/error.h>
#include <avahi-common/strlst.h>
#endif
