// Where a Context's selection tree comes from: ContextOptions::selection_file, else the
// environment variable TRIBUTARY_SELECTION, else the built-in tree (the single-machine one;
// the Context takes the cluster tree instead where the communicator spans nodes). With MPI,
// rank 0 reads it and broadcasts the text, so every rank parses the same bytes (and fails
// alike).
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "context/context_impl.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

struct SelectionSource {
  std::string name;  // the file, or "built-in selection tree"
  std::string text;
  std::string error;     // non-empty: the file could not be read
  bool builtin = false;  // no file: the built-in tree for the communicator's shape
};

SelectionSource ReadSelectionSource(const std::string& option) {
  SelectionSource s;
  std::string file = option;
  if (file.empty()) {
    const char* env = std::getenv("TRIBUTARY_SELECTION");
    if (env && *env) file = env;
  }
  if (file.empty()) {
    s.name = "built-in selection tree";
    s.builtin = true;
    return s;
  }
  s.name = file;
  std::ifstream in(file, std::ios::binary);
  std::ostringstream buf;
  if (in) buf << in.rdbuf();
  if (!in) s.error = "cannot read the selection tree file '" + file + "'";
  s.text = buf.str();
  return s;
}

}  // namespace

#if TRIBUTARY_HAVE_MPI
SelectionTree LoadSelection(MPI_Comm comm, int rank, const std::string& option, bool* builtin) {
  SelectionSource s;
  if (rank == 0) s = ReadSelectionSource(option);
  // One broadcast of the lengths (and the built-in flag), one of the bytes where there are
  // any: the built-in tree costs one small broadcast.
  long long head[4] = {static_cast<long long>(s.error.size()), s.builtin ? 1 : 0,
                       static_cast<long long>(s.name.size()),
                       static_cast<long long>(s.text.size())};
  CheckMpi(MPI_Bcast(head, 4, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  std::string bytes = s.error + s.name + s.text;
  const auto total = static_cast<std::size_t>(head[0] + head[2] + head[3]);
  bytes.resize(total);
  if (total)
    CheckMpi(MPI_Bcast(bytes.data(), static_cast<int>(total), MPI_CHAR, 0, comm), "MPI_Bcast");
  const auto error_len = static_cast<std::size_t>(head[0]);
  const auto name_len = static_cast<std::size_t>(head[2]);
  if (error_len) throw UsageError("tributary::Context: " + bytes.substr(0, error_len));
  *builtin = head[1] != 0;
  if (*builtin)
    return SelectionTree::Parse(SelectionTree::DefaultJson(), "built-in selection tree");
  return SelectionTree::Parse(bytes.substr(error_len + name_len),
                              bytes.substr(error_len, name_len));
}
#else
SelectionTree LoadSelection(const std::string& option) {
  const SelectionSource s = ReadSelectionSource(option);
  if (!s.error.empty()) throw UsageError("tributary::Context: " + s.error);
  if (s.builtin) return SelectionTree::Parse(SelectionTree::DefaultJson(), s.name);  // one node
  return SelectionTree::Parse(s.text, s.name);
}
#endif

}  // namespace tributary::detail
