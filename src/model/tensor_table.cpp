#include "model/tensor_table.h"

#include "encoding/encoding.h"
#include "synapse/error.h"

namespace synapse {

std::string to_string(const TensorShape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

void TensorTable::add(ir::WeightDescriptor descriptor) {
  const std::string name = descriptor.name;
  if (!by_name_.emplace(name, std::move(descriptor)).second)
    throw Error(ErrorKind::DuplicateTensor, "tensor '" + name + "' appears twice", Error::kNoOffset, name);
}

const ir::WeightDescriptor* TensorTable::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

const ir::WeightDescriptor& TensorTable::require(const std::string& name, const TensorShape& shape) const {
  const ir::WeightDescriptor* found = find(name);
  if (!found) throw Error(ErrorKind::MissingKey, "tensor '" + name + "' is missing", Error::kNoOffset, name);
  const ir::WeightDescriptor& d = *found;
  if (d.shape != shape)
    throw Error(ErrorKind::InvalidValue,
                "tensor '" + name + "' has shape " + to_string(d.shape) + ", expected " + to_string(shape),
                Error::kNoOffset, name);
  const EncodingInfo encoding = encoding_info(d.encoding);
  if (!encoding.has_codec)
    throw Error(ErrorKind::UnknownEncoding,
                "tensor '" + name + "' has encoding " + encoding.name + ", which has no decoder", Error::kNoOffset,
                name);
  return d;
}

}  // namespace synapse
