// The translation unit that builds the layer libraries' precompiled header (CMakeLists.txt, SR_PCH_HEADERS).
