/// The package's version: the one place it is written. `forwarding --version` prints it, the
/// benchmark's JSON records it; CHANGELOG.md's newest heading and the release tag repeat it.
enum PackageVersion {
    static let current = "0.1.0"
}
