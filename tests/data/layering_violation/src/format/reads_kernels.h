// Fixture for the layering check: one include that breaks a rule (kernels/
// from format/) between two that do not.
#pragma once

#include "encoding/needs_ir.h"
#include "kernels/cpu/dot.h"
#include "synapse/error.h"
