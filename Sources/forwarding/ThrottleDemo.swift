import DynamicRuntime

/// The throttling part of the demo (filled in with the MessageThrottle engine).
enum ThrottleDemo {
    static func run() throws {}
}
