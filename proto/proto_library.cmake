# worldgen_proto_library(TARGET ROOT DIR PROTOS file...): a static library of the C++ messages and gRPC
# stubs protoc generates from PROTOS (paths under ROOT, which is also the import root). Generated
# headers are included as "<path relative to ROOT without .proto>.pb.h" / ".grpc.pb.h".
# The one place the project runs protoc; every generated library goes through it.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)

function(worldgen_proto_library target)
  cmake_parse_arguments(ARG "" "ROOT" "PROTOS" ${ARGN})
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/gen)
  file(MAKE_DIRECTORY ${gen_dir})
  set(srcs)
  foreach(proto ${ARG_PROTOS})
    file(RELATIVE_PATH rel ${ARG_ROOT} ${proto})
    string(REGEX REPLACE "\\.proto$" "" base ${gen_dir}/${rel})
    list(APPEND srcs ${base}.pb.cc ${base}.pb.h ${base}.grpc.pb.cc ${base}.grpc.pb.h)
    add_custom_command(
      OUTPUT ${base}.pb.cc ${base}.pb.h ${base}.grpc.pb.cc ${base}.grpc.pb.h
      COMMAND protobuf::protoc
        --proto_path=${ARG_ROOT}
        --cpp_out=${gen_dir}
        --grpc_out=${gen_dir}
        --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>
        ${proto}
      DEPENDS ${ARG_PROTOS}
      COMMENT "protoc ${rel}")
  endforeach()
  add_library(${target} STATIC ${srcs})
  target_include_directories(${target} PUBLIC ${gen_dir})
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf gRPC::grpc++)
  # Generated code is not ours to warn about.
  target_compile_options(${target} PRIVATE -w)
endfunction()
