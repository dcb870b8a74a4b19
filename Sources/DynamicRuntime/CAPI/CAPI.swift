import CShims

// The C API's functions that need the Swift runtime. Each failure records its error for
// sf_last_error() and returns NULL / false / a non-zero status; nothing a C caller passes
// traps.

func fail<T>(_ error: RuntimeError, _ value: T) -> T {
    error.record()
    return value
}

func succeed() { sf_set_last_error(SF_OK, nil) }

func nameArg(_ p: UnsafePointer<CChar>?, _ what: String) -> Result<String, RuntimeError> {
    guard let p else { return .failure(.invalidArgument(className: "-", selector: "-", reason: "\(what) is NULL")) }
    return .success(String(cString: p))
}
