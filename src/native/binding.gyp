{
  "targets": [
    {
      "target_name": "softdpu",
      "sources": ["softdpu.c"],
      "cflags": ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
