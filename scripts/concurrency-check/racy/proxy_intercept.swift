// expect: mutation of captured var 'log' in concurrently-executing code
// A proxy's interceptor runs on the sender's thread.
import DynamicRuntime

func makeLoggingProxy() throws -> RuntimeClass {
    var log: [String] = []
    return try Proxy.makeClass(name: "LoggingProxy") { invocation, proceed in
        log.append(invocation.selector.name)
        try proceed()
    }
}
