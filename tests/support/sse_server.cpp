#include "tests/support/sse_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace skillrunner::test_support {

struct SseServer::Impl {
  int listener = -1;
  std::uint16_t port = 0;
  std::atomic<bool> stopping{false};
  mutable std::mutex mutex;
  std::deque<SseScript> scripts;
  std::vector<std::string> bodies;
  std::vector<std::string> targets;
  int hung_up = 0;
  std::thread thread;

  void Serve();
  void Answer(int fd);
  bool ReadRequest(int fd);
};

namespace {

bool SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool SendChunk(int fd, std::string_view piece) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
  return SendAll(fd, std::string(size) + std::string(piece) + "\r\n");
}

// Waits for the peer to close; true when it did before `timeout`.
bool PeerHungUp(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char byte;
  return ::recv(fd, &byte, 1, MSG_PEEK) <= 0;
}

}  // namespace

bool SseServer::Impl::ReadRequest(int fd) {
  std::string data;
  char buffer[4096];
  std::size_t header_end = std::string::npos;
  std::size_t length = 0;
  for (;;) {
    if (header_end == std::string::npos && (header_end = data.find("\r\n\r\n")) != std::string::npos) {
      std::string head = data.substr(0, header_end);
      for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (auto at = head.find("content-length:"); at != std::string::npos) length = std::stoul(head.substr(at + 15));
      header_end += 4;
    }
    if (header_end != std::string::npos && data.size() >= header_end + length) break;
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  std::lock_guard lock(mutex);
  std::size_t space = data.find(' ');
  targets.push_back(data.substr(space + 1, data.find(' ', space + 1) - space - 1));
  bodies.push_back(data.substr(header_end, length));
  return true;
}

void SseServer::Impl::Answer(int fd) {
  if (!ReadRequest(fd)) return;
  SseScript script;
  script.status = 500;
  script.content_type = "application/json";
  script.body = R"({"error":{"message":"no script"}})";
  {
    std::lock_guard lock(mutex);
    if (!scripts.empty()) {
      script = std::move(scripts.front());
      scripts.pop_front();
    }
  }
  std::string head = "HTTP/1.1 " + std::to_string(script.status) + " X\r\nContent-Type: " + script.content_type +
                     "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  if (!SendAll(fd, head)) return;
  const std::size_t piece = script.piece_bytes == 0 ? script.body.size() : script.piece_bytes;
  const std::size_t hold = script.hold_at.value_or(std::string::npos);
  for (std::size_t at = 0; at < script.body.size();) {
    std::size_t end =
        std::min({at + std::max<std::size_t>(piece, 1), script.body.size(), at < hold ? hold : script.body.size()});
    if (!SendChunk(fd, std::string_view(script.body).substr(at, end - at))) {
      // A client that stopped reading hung up before the rest too, even before the hold was reached.
      std::lock_guard lock(mutex);
      if (script.hold_at && at <= hold) ++hung_up;
      return;
    }
    at = end;
    if (script.piece_gap.count() > 0 && at < script.body.size()) std::this_thread::sleep_for(script.piece_gap);
    if (at == hold && PeerHungUp(fd, script.hold_timeout)) {
      std::lock_guard lock(mutex);
      ++hung_up;
      return;
    }
  }
  SendAll(fd, "0\r\n\r\n");
}

void SseServer::Impl::Serve() {
  while (!stopping) {
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Answer(fd);
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
  }
}

SseServer::SseServer() : impl_(std::make_unique<Impl>()) {
  impl_->listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (::bind(impl_->listener, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(impl_->listener, 16) != 0 ||
      ::getsockname(impl_->listener, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("SseServer: cannot listen");
  }
  impl_->port = ntohs(address.sin_port);
  impl_->thread = std::thread([impl = impl_.get()] { impl->Serve(); });
}

SseServer::~SseServer() {
  impl_->stopping = true;
  impl_->thread.join();
  ::close(impl_->listener);
}

std::string SseServer::base_url() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }

void SseServer::Enqueue(SseScript script) {
  std::lock_guard lock(impl_->mutex);
  impl_->scripts.push_back(std::move(script));
}

std::vector<std::string> SseServer::request_bodies() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->bodies;
}

std::vector<std::string> SseServer::request_targets() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->targets;
}

int SseServer::hung_up_during_hold() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->hung_up;
}

bool SseServer::WaitForHangUps(int count, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (hung_up_during_hold() < count) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace skillrunner::test_support
