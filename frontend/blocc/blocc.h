// The one header a kernel author includes.
//
//   #include <blocc/blocc.h>
//   namespace bl = blocc;
#pragma once

#include "blocc/control.h"
#include "blocc/dtype.h"
#include "blocc/kernel.h"
#include "blocc/ops.h"
#include "blocc/tensor.h"
