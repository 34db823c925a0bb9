// Command emptyplugin is bench/codegen's stand-in for a protoc plugin that
// does no work: it reads the request and answers with no files, declaring
// the features and editions protoc-gen-msgcontract declares. In a protoc
// build it measures what protoc itself spends on each plugin (encoding the
// request, starting the process), which no plugin can save.
package main

import (
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "emptyplugin:", err)
		os.Exit(1)
	}
	resp, err := proto.Marshal(&pluginpb.CodeGeneratorResponse{
		SupportedFeatures: proto.Uint64(uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL |
			pluginpb.CodeGeneratorResponse_FEATURE_SUPPORTS_EDITIONS)),
		MinimumEdition: proto.Int32(int32(descriptorpb.Edition_EDITION_PROTO2)),
		MaximumEdition: proto.Int32(int32(descriptorpb.Edition_EDITION_2023)),
	})
	if err == nil {
		_, err = os.Stdout.Write(resp)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "emptyplugin:", err)
		os.Exit(1)
	}
}
