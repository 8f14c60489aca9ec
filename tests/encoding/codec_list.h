// The encodings that have a reference codec, for tests that loop over them.
#pragma once

#include "encoding/encoding.h"

namespace synapse {

inline constexpr Encoding kCodecs[] = {Encoding::F32,  Encoding::F16,  Encoding::BF16, Encoding::Q8_0,
                            Encoding::Q4_0, Encoding::Q4_1, Encoding::Q5_0, Encoding::Q5_1,
                            Encoding::Q4_K, Encoding::Q5_K, Encoding::Q6_K};

}  // namespace synapse
