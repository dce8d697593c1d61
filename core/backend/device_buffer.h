#pragma once
// An owned, growable allocation of device memory (core/device.h).
#include "synk/core/device.h"
#include "synk/core/owned_buffer.h"

namespace synk {

using DeviceBuffer = OwnedBuffer<Device>;

}  // namespace synk
