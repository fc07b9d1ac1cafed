//! A repro attribute whose blob is no blob, of a newer format or version, or of an unknown axis.

#[probtest::repro("hello")]
#[test]
fn not_a_blob() {}

#[probtest::repro("pd2:eyJ2IjozfQ")]
#[test]
fn newer_format() {}

#[probtest::repro("pd1:eyJ2IjozLCJwYWNrYWdlIjoicHJvYnRlc3QtZTJlIiwia2luZCI6InRlc3QiLCJ0YXJnZXQiOiJ1aSIsInRlc3QiOiJuZXdlcl92ZXJzaW9uIiwiYXhpcyI6ImVudHJvcHkiLCJ0ZXN0cyI6WyJuZXdlcl92ZXJzaW9uIl0sInRocmVhZHMiOjEsInBlcnR1cmJhdGlvbiI6eyJzZWVkIjo3LCJoYXNoX29ubHkiOmZhbHNlLCJjbG9jayI6bnVsbCwidGlja19tcyI6bnVsbCwibmV0d29ya19ibG9ja2VkIjpmYWxzZSwiY3B1cyI6bnVsbCwic3RyZXNzIjpmYWxzZSwiZnJlc2hfaG9tZSI6ZmFsc2UsInNjcnViYmVkX2VudiI6ZmFsc2UsInR6IjpudWxsfX0")]
#[test]
fn newer_version() {}

#[probtest::repro("pd1:eyJ2IjoyLCJwYWNrYWdlIjoicHJvYnRlc3QtZTJlIiwia2luZCI6InRlc3QiLCJ0YXJnZXQiOiJ1aSIsInRlc3QiOiJ1bmtub3duX2F4aXMiLCJheGlzIjoid2VhdGhlciIsInRlc3RzIjpbInVua25vd25fYXhpcyJdLCJ0aHJlYWRzIjoxLCJwZXJ0dXJiYXRpb24iOnsic2VlZCI6NywiaGFzaF9vbmx5IjpmYWxzZSwiY2xvY2siOm51bGwsInRpY2tfbXMiOm51bGwsIm5ldHdvcmtfYmxvY2tlZCI6ZmFsc2UsImNwdXMiOm51bGwsInN0cmVzcyI6ZmFsc2UsImZyZXNoX2hvbWUiOmZhbHNlLCJzY3J1YmJlZF9lbnYiOmZhbHNlLCJ0eiI6bnVsbH19")]
#[test]
fn unknown_axis() {}

#[probtest::repro(42)]
#[test]
fn not_a_string() {}

fn main() {}
