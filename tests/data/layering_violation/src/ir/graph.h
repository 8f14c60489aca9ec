// Fixture for the layering check: a layer that exists.
#pragma once
