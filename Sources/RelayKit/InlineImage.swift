/// The image types a message may carry inline (base64 in the stored message): what the Clawline
/// app shows, so every protocol that takes images takes these.
public enum InlineImage {
    public static let mimeTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/heic"]
}
