// Fixture for the layering check: kernels/ may include ir/ and encoding/.
#pragma once

#include "encoding/needs_ir.h"
#include "ir/graph.h"
