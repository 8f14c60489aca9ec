#include "encoding/k_quant_fit.h"

#include <algorithm>
#include <cmath>

namespace synapse::kquant {

namespace {

// Below this magnitude a sub-block counts as all zero.
constexpr float kZeroGroupEps = 1e-15f;

// Weighted sums over one level assignment, for its least-squares fit.
struct OffsetSums {
  float sum_l = 0;   // sum w*l
  float sum_l2 = 0;  // sum w*l*l
  float sum_xl = 0;  // sum w*l*x
};

OffsetSums assign_offset_levels(int n, int nmax, const float* x, const float* w, float min, float iscale,
                                uint8_t* levels) {
  OffsetSums s;
  for (int i = 0; i < n; ++i) {
    const int l = rounding::nearest_level(iscale * (x[i] - min), 0.0f, static_cast<float>(nmax));
    levels[i] = static_cast<uint8_t>(l);
    s.sum_l += w[i] * l;
    s.sum_l2 += w[i] * l * l;
    s.sum_xl += w[i] * l * x[i];
  }
  return s;
}

// sum w * (scale*l + min - x)^2
float offset_error(int n, const float* x, const float* w, const uint8_t* levels, float scale, float min) {
  float error = 0;
  for (int i = 0; i < n; ++i) {
    const float diff = scale * levels[i] + min - x[i];
    error += w[i] * (diff * diff);
  }
  return error;
}

}  // namespace

float fit_offset_levels(int n, int nmax, const float* x, const float* w, uint8_t* levels, float& offset,
                        float rmin, float rdelta, int nstep) {
  float min = x[0];
  float max = x[0];
  float sum_w = 0;
  float sum_x = 0;
  for (int i = 0; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  // The format only subtracts an offset, so a positive minimum becomes 0.
  min = std::min(min, 0.0f);
  if (!(max > min)) {  // constant sub-block (or NaN)
    std::fill(levels, levels + n, uint8_t{0});
    offset = -min;
    return 0.0f;
  }

  const float iscale0 = nmax / (max - min);
  float scale = 1 / iscale0;
  assign_offset_levels(n, nmax, x, w, min, iscale0, levels);
  float best_error = offset_error(n, x, w, levels, scale, min);

  uint8_t trial[kMaxFitElems];
  for (int step = 0; step <= nstep; ++step) {
    const float iscale = (rmin + rdelta * step + nmax) / (max - min);
    const OffsetSums s = assign_offset_levels(n, nmax, x, w, min, iscale, trial);
    const float det = sum_w * s.sum_l2 - s.sum_l * s.sum_l;
    if (!(det > 0)) continue;
    // Weighted least squares for x ~= a*l + b over this level assignment.
    float this_scale = (sum_w * s.sum_xl - sum_x * s.sum_l) / det;
    float this_min = (s.sum_l2 * sum_x - s.sum_l * s.sum_xl) / det;
    if (this_min > 0) {
      this_min = 0;
      this_scale = s.sum_xl / s.sum_l2;
    }
    const float error = offset_error(n, x, w, trial, this_scale, this_min);
    if (error < best_error) {
      std::copy(trial, trial + n, levels);
      best_error = error;
      scale = this_scale;
      min = this_min;
    }
  }
  offset = -min;
  return scale;
}

float fit_symmetric_levels(int n, int nmax, const float* x, const float* weights, int8_t* levels) {
  float amax = 0;
  float max = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax < kZeroGroupEps) {
    std::fill(levels, levels + n, int8_t{0});
    return 0.0f;
  }

  const float lo = static_cast<float>(-nmax);
  const float hi = static_cast<float>(nmax - 1);
  // Best scale for a grid is sumlx / suml2; its fit is better the larger
  // sumlx^2 / suml2 (the weighted squared error falls by that much).
  auto sums_for = [&](float iscale, int8_t* out, float& sumlx, float& suml2) {
    sumlx = 0;
    suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = rounding::nearest_level(iscale * x[i], lo, hi);
      out[i] = static_cast<int8_t>(l + nmax);
      const float w = weights != nullptr ? weights[i] : x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
  };

  float sumlx, suml2;
  sums_for(-nmax / max, levels, sumlx, suml2);
  float scale = suml2 > 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  int8_t trial[kMaxFitElems];
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    sums_for(-(nmax + 0.1f * step) / max, trial, sumlx, suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      std::copy(trial, trial + n, levels);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float fit_unsigned_levels(int n, int nmax, const float* x, const float* w, uint8_t* levels) {
  float max = 0;
  for (int i = 0; i < n; ++i) max = max > x[i] ? max : x[i];
  if (max < kZeroGroupEps) {
    std::fill(levels, levels + n, uint8_t{0});
    return 0.0f;
  }
  // Levels are stored as bytes and read back as such, as in ggml (which
  // matters only for a negative x, whose level wraps).
  auto level = [nmax](float v) { return std::min(nmax, rounding::nearest_int(v)); };
  float iscale = nmax / max;
  for (int i = 0; i < n; ++i) levels[i] = static_cast<uint8_t>(rounding::nearest_int(iscale * x[i]));
  const float scale0 = 1 / iscale;
  float best_mse = 0;
  for (int i = 0; i < n; ++i) {
    const float diff = x[i] - scale0 * levels[i];
    best_mse += w[i] * diff * diff;
  }
  for (int step = -4; step <= 4; ++step) {
    if (step == 0) continue;
    const float trial_iscale = (0.1f * step + nmax) / max;
    const float trial_scale = 1 / trial_iscale;
    float mse = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = x[i] - trial_scale * level(trial_iscale * x[i]);
      mse += w[i] * diff * diff;
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = trial_iscale;
    }
  }

  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = level(iscale * x[i]);
    levels[i] = static_cast<uint8_t>(l);
    sumlx += w[i] * x[i] * l;
    suml2 += w[i] * l * l;
  }
  // Move one level at a time to where the fit without it puts it, keeping
  // the move when the fit's explained part (sumlx^2 / suml2) grows.
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      float slx = sumlx - w[i] * x[i] * levels[i];
      float sl2 = suml2 - w[i] * levels[i] * levels[i];
      if (!(slx > 0 && sl2 > 0)) continue;
      const int l = level(x[i] * sl2 / slx);
      if (l == levels[i]) continue;
      slx += w[i] * x[i] * l;
      sl2 += w[i] * l * l;
      if (slx * slx * suml2 > sumlx * sumlx * sl2) {
        levels[i] = static_cast<uint8_t>(l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  return suml2 > 0 ? sumlx / suml2 : 0.0f;
}

}  // namespace synapse::kquant
