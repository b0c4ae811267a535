#pragma once

#include <string_view>

namespace skillrunner::validation {

// Whether `text` is a valid `format` value. Checks email, hostname, uri, uuid,
// ipv4, ipv6 here and date, time, date-time through valijson; any other format
// name is accepted (JSON Schema makes unknown formats annotations).
bool CheckFormat(std::string_view format, std::string_view text);

// Whether CheckFormat checks `format` (else every string passes it).
bool IsCheckedFormat(std::string_view format);

}  // namespace skillrunner::validation
