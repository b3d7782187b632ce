// The klog lines lib/log/klog_test.ts expects, as the Go libraries write
// them: k8s.io/klog/v2 v2.140.0 textlogger (--logging-format=text) and
// k8s.io/component-base v0.36.3 logs/json (--logging-format=json), the
// versions of Kubernetes v1.36 and csi-provisioner v6.3.0. To run it, copy
// tests/cluster/tools/go.mod and go.sum next to this file, then:
//
//	GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off go run .
//
// Each line's header (time, pid, file:line) and "ts"/"caller" differ from
// run to run; the test compares the rest.
package main

import (
	"errors"
	"os"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/logs/json"
	"k8s.io/klog/v2/textlogger"
)

func lines(logger logr.Logger) {
	logger.V(2).Info("Provisioning volume", "claim", "ns/data", "size", 1073741824, "ok", true, "ratio", 1.5, "none", nil)
	logger.V(0).Info("quote \"me\"\tand\nbreak", "s", "a\"b\\c", "multi", "line one\nline two", "trail", "x\n", "uni", "héllo ☃ \u00a0\u200b\x01\x7f", "html", "<a&b>")
	logger.V(4).Info("objects", "request", map[string]interface{}{"html": "<&>", "name": "pvc-1", "secrets": "***stripped***"}, "list", []string{"a", "b"}, "empty", map[string]string{})
	logger.WithName("provision").WithValues("node", "node-a").V(2).Info("with context", "claim", "ns/x")
	logger.WithName("capacity").Error(errors.New("boom: inner"), "CSI GetCapacity failed", "storageClass", "fast")
	logger.WithValues("node", "node-a").V(2).Info("only context")
	logger.V(0).Info("", "emptymsg", "")
}

func main() {
	lines(textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(os.Stdout))))
	json, _ := json.NewJSONLogger(logsapi.VerbosityLevel(10), zapcore.AddSync(os.Stdout), nil, nil)
	lines(json)
}
