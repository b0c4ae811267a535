#include "runner/view/view_pages.h"

#include <boost/json/serialize.hpp>

#include "runner/view/view_assets.h"

namespace skillrunner::view {
namespace json = boost::json;

namespace {

std::string Shell(std::string_view root, std::string_view page, std::string_view data) {
  std::string html =
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // The export is opened from files, where no header can carry the policy.
  if (!data.empty()) {
    html +=
        "<meta http-equiv=\"Content-Security-Policy\" content=\"" + std::string(kMetaContentSecurityPolicy) + "\">\n";
  }
  // An empty icon: a browser asks for /favicon.ico otherwise, which is not served.
  html += "<title>skillrunner view</title>\n<link rel=\"icon\" href=\"data:,\">\n<link rel=\"stylesheet\" href=\"" +
          std::string(root) + "assets/app.css\">\n</head>\n<body data-root=\"" + std::string(root) + "\"";
  if (!page.empty()) html += " data-page=\"" + std::string(page) + "\"";
  html += ">\n<main id=\"app\"></main>\n";
  if (!data.empty()) {
    html += "<script type=\"application/json\" id=\"page-data\">" + std::string(data) + "</script>\n";
  }
  html += "<script src=\"" + std::string(root) + "assets/app.js\"></script>\n</body>\n</html>\n";
  return html;
}

}  // namespace

std::string ServedShell() { return Shell("/", "", ""); }

std::string ScriptSafeJson(const json::object& data) {
  const std::string text = json::serialize(data);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    // Outside strings JSON has none of these, so escaping every one keeps the text JSON.
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

std::string ExportedPage(std::string_view page, std::string_view root, const json::object& data) {
  return Shell(root, page, ScriptSafeJson(data));
}

std::optional<Asset> FindAsset(std::string_view name) {
  std::string_view body = ViewAsset(name);
  if (body.empty()) return std::nullopt;
  if (name.ends_with(".js")) return Asset{"text/javascript; charset=utf-8", body};
  if (name.ends_with(".css")) return Asset{"text/css; charset=utf-8", body};
  return std::nullopt;
}

std::string ExportName(std::string_view name) {
  constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    const bool keep =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '_';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace skillrunner::view
