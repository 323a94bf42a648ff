pub fn frame(source: &str, content: &str) -> String {
    format!("<untrusted source=\"{source}\" nonce=\"0\">\n{content}\n</untrusted nonce=\"0\">")
}
