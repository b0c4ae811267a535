#pragma once

// Internal to services/http: small helpers to build HttpError values.

#include <expected>
#include <string>

#include "services/http/http_client.h"

namespace skillrunner::http {

inline std::unexpected<HttpError> Fail(HttpErrorKind kind, std::string message) {
  return std::unexpected(HttpError{kind, std::move(message)});
}

inline std::unexpected<HttpError> Cancelled() { return Fail(HttpErrorKind::kCancelled, "request cancelled"); }

}  // namespace skillrunner::http
