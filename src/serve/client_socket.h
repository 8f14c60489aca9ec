// Whether the client of a request still waits for the answer. cpp-httplib
// 0.11 tells a handler nothing of its connection, so the socket is found by
// its two addresses among the process's descriptors, and a read that peeks
// says whether the client closed it.
#pragma once

#include <string>

namespace synapse::serve {

class ClientSocket {
 public:
  // The connection from remote_addr:remote_port to local_port; none found
  // (an address family or a form not understood) leaves gone() false.
  ClientSocket(const std::string& remote_addr, int remote_port, int local_port);
  // True once the client has closed or reset the connection.
  bool gone() const;

 private:
  bool same_connection(int fd) const;

  std::string remote_addr_;
  int remote_port_;
  int local_port_;
  int fd_ = -1;
};

}  // namespace synapse::serve
