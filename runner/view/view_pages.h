#pragma once

// The viewer's pages: one HTML shell that the compiled-in app.js fills from
// the JSON API (served), or from the page's own data (the static export), and
// the assets themselves. No page loads anything from elsewhere: every answer
// carries a Content-Security-Policy of default-src 'self'.

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace skillrunner::view {

// The served pages' header; the exported pages carry it in a <meta> element, less frame-ancestors,
// which browsers take from a header only (and report as an error in a <meta>).
inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
inline constexpr std::string_view kMetaContentSecurityPolicy =
    "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'";

// The shell every page path answers when served.
std::string ServedShell();

// An exported page: the shell with `data` inlined as
// <script type="application/json" id="page-data"> (every "<" written \u003c,
// so no text in it can end the element), `page` (suites, suite, run,
// compare, case, rollouts) and `root` (the way back to the export's root
// folder: "" or "../").
std::string ExportedPage(std::string_view page, std::string_view root, const boost::json::object& data);

struct Asset {
  std::string_view content_type;
  std::string_view body;
};
// "app.js", "app.css"; nullopt for any other name.
std::optional<Asset> FindAsset(std::string_view name);

// A name as an exported file name: the bytes [A-Za-z0-9.-] kept, every
// other byte "_" and two upper-case hex digits ("a/b_c" -> "a_2Fb_5Fc").
std::string ExportName(std::string_view name);

// The JSON text with "<", ">" and "&" written as \u escapes, safe inside a <script> element.
std::string ScriptSafeJson(const boost::json::object& data);

}  // namespace skillrunner::view
