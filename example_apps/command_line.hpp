// The examples' command lines: CLI11, parsed the same way on every rank.
#pragma once

// SimGrid SMPI defines exit(x) as a macro in every file; it would rename CLI11's App::exit.
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>

#include "tributary/tributary.hpp"

namespace examples {

/// Parses argv with `app` on every rank (after MPI_Init). Returns -1 when the program goes
/// on, else the code to exit with (after MPI_Finalize): 0 after --help, non-zero after a bad
/// or unknown option. Only rank 0 prints the usage or the error.
inline int ParseCommandLine(CLI::App& app, int argc, char** argv) {
  int rank = 0;
#if TRIBUTARY_HAVE_MPI
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return rank == 0 ? app.exit(e) : e.get_exit_code();
  }
  return -1;
}

}  // namespace examples
