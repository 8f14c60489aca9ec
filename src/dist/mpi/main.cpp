// synapse-mpi: the synapse commands with the MPI transport installed, for
// `mpirun -np R synapse-mpi run ...` (each rank one pipeline stage). A rank
// whose command fails ends the whole job, so no rank waits for it.
#include "cli/command.h"
#include "dist/mpi/mpi_transport.h"

int main(int argc, char** argv) {
  synapse::dist::MpiTransport transport(&argc, &argv);
  synapse::dist::set_process_transport(&transport);
  const int code = synapse::cli::run_cli(argc, argv, "synapse-mpi");
  synapse::dist::set_process_transport(nullptr);
  if (code != 0) transport.abort(code);
  return code;
}
