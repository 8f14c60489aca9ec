// Fixture for the layering check: the bottom layer including a layer above.
#pragma once

#include "ir/graph.h"
