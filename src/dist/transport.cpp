#include "dist/transport.h"

namespace synapse::dist {
namespace {

Transport* installed = nullptr;

}  // namespace

Transport* process_transport() { return installed; }
void set_process_transport(Transport* transport) { installed = transport; }

}  // namespace synapse::dist
