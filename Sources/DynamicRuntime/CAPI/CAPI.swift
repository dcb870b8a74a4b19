import CDynamicRuntime

// The C API's functions that need the Swift runtime. Each failure records its error for
// sf_last_error() and returns NULL / false / a non-zero status; nothing a C caller passes
// traps.

func fail<T>(_ error: RuntimeError, _ value: T) -> T {
    error.record()
    return value
}

// Inline: one thread-local load unless an error is set (hook and method bodies call this per call).
func succeed() { sf_clear_last_error() }

func nameArg(_ p: UnsafePointer<CChar>?, _ what: String) -> Result<String, RuntimeError> {
    guard let p else { return .failure(.nullArgument(what)) }
    return .success(String(cString: p))
}
