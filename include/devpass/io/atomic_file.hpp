// devpass/io/atomic_file.hpp — writes a file so that readers see all of it or none of it.
//
// write_file_atomically(path, write) calls write(stream) on a temporary file beside `path`, then
// renames it over `path`. If write throws or the stream fails, the temporary is removed and the
// target is left as it was: a tool that fails never leaves partial output. Path "-" writes to
// standard output directly.
#pragma once

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>

#include <unistd.h>

#include "devpass/graph/error.hpp"

namespace devpass {

template <class Write>
void write_file_atomically(const std::string& path, Write&& write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw graph_error("<stdout>", "", "", "cannot write standard output");
    return;
  }
  // Same directory, so the rename stays on one file system; the pid keeps concurrent writers apart.
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  try {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw graph_error(path, "", "", std::string("cannot create the file: ") + std::strerror(errno));
    write(static_cast<std::ostream&>(out));
    out.close();
    if (!out) throw graph_error(path, "", "", "cannot write the file");
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) throw graph_error(path, "", "", "cannot replace the file: " + ec.message());
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
}

}  // namespace devpass
