// docs/simulated.md quotes the fault-script documentation; keep the two equal.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "services/providers/simulated/fault_script.h"

namespace skillrunner::providers {
namespace {

TEST(FaultScriptDocsTest, TheDocsQuoteTheDocumentationVerbatim) {
  std::ifstream in(SKILLRUNNER_SOURCE_DIR "/docs/simulated.md");
  std::stringstream readme;
  readme << in.rdbuf();
  EXPECT_NE(readme.str().find(std::string(FaultScriptDocumentation())), std::string::npos)
      << "docs/simulated.md's fault-script section differs from FaultScriptDocumentation()";
}

}  // namespace
}  // namespace skillrunner::providers
