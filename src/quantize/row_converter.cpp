#include "quantize/row_converter.h"

#include <cmath>
#include <exception>
#include <vector>

#include "kernels/cpu/kquant_encode.h"
#include "synapse/error.h"

namespace synapse::quant {

void convert_rows(cpu::ThreadPool& pool, const uint8_t* src, Encoding from, uint8_t* dst, Encoding to,
                  uint64_t row_elems, uint64_t n_rows, const std::string& tensor, RowImportance importance) {
  const uint64_t in_bytes = row_bytes(from, row_elems);
  const uint64_t out_bytes = row_bytes(to, row_elems);
  const auto n = static_cast<int64_t>(row_elems);
  std::vector<std::exception_ptr> failures(static_cast<size_t>(pool.size()));
  pool.run([&](int worker, int workers) {
    try {  // a pool task must not throw
      const cpu::Range rows = cpu::split_range(static_cast<int64_t>(n_rows), worker, workers);
      std::vector<float> values(row_elems);
      for (int64_t r = rows.begin; r < rows.end; ++r) {
        uint8_t* out = dst + static_cast<uint64_t>(r) * out_bytes;
        dequantize_row(from, src + static_cast<uint64_t>(r) * in_bytes, values.data(), n);
        if (importance.values != nullptr) {
          const uint64_t matrix = static_cast<uint64_t>(r) / importance.rows_per_matrix;
          quantize_row_weighted(to, values.data(), out, n, importance.values + matrix * row_elems);
        } else {
          cpu::encode_row(to, values.data(), out, n);
        }
        dequantize_row(to, out, values.data(), n);
        for (float v : values)
          if (!std::isfinite(v))
            throw Error(ErrorKind::InvalidValue,
                        "row " + std::to_string(r) + " encodes to non-finite values in " +
                            encoding_info(to).name,
                        Error::kNoOffset, tensor);
      }
    } catch (...) {
      failures[static_cast<size_t>(worker)] = std::current_exception();
    }
  });
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

}  // namespace synapse::quant
