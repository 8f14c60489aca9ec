#include "serve/client_socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

namespace synapse::serve {
namespace {

// The address and port of a socket name, as cpp-httplib writes them.
bool address_of(const sockaddr_storage& name, std::string& addr, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (name.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(name);
    port = ntohs(in.sin_port);
    addr = inet_ntop(AF_INET, &in.sin_addr, text, sizeof text) ? text : "";
    return true;
  }
  if (name.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(name);
    port = ntohs(in6.sin6_port);
    addr = inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text) ? text : "";
    return true;
  }
  return false;
}

}  // namespace

ClientSocket::ClientSocket(const std::string& remote_addr, int remote_port, int local_port)
    : remote_addr_(remote_addr), remote_port_(remote_port), local_port_(local_port) {
  DIR* fds = ::opendir("/proc/self/fd");
  if (!fds) return;
  while (const dirent* entry = ::readdir(fds)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;
    if (same_connection(static_cast<int>(fd))) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(fds);
}

bool ClientSocket::same_connection(int fd) const {
  sockaddr_storage peer{}, self{};
  socklen_t peer_size = sizeof peer, self_size = sizeof self;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0) return false;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &self_size) != 0) return false;
  std::string peer_addr, self_addr;
  int peer_port = 0, self_port = 0;
  return address_of(peer, peer_addr, peer_port) && address_of(self, self_addr, self_port) &&
         peer_port == remote_port_ && self_port == local_port_ && peer_addr == remote_addr_;
}

bool ClientSocket::gone() const {
  // The descriptor may have been closed and reused: only the same
  // connection is asked.
  if (fd_ < 0 || !same_connection(fd_)) return fd_ >= 0;
  char byte = 0;
  const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace synapse::serve
