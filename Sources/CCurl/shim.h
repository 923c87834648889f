#ifndef CLAWRELAY_CURL_SHIM_H
#define CLAWRELAY_CURL_SHIM_H

#include <curl/curl.h>

/// curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic macros Swift cannot
/// call; these wrappers fix one argument type each.

static inline CURLcode relay_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

static inline CURLcode relay_curl_set_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode relay_curl_set_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

/// libcurl copies string options (since 7.17), except CURLOPT_POSTFIELDS (use COPYPOSTFIELDS).
static inline CURLcode relay_curl_set_str(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode relay_curl_set_ptr(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode relay_curl_set_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}

/// The shape of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
typedef size_t (*relay_curl_data_callback)(char *data, size_t size, size_t count, void *user);

static inline CURLcode relay_curl_set_write_callback(CURL *easy, relay_curl_data_callback callback, void *user) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(easy, CURLOPT_WRITEDATA, user);
}

static inline CURLcode relay_curl_set_header_callback(CURL *easy, relay_curl_data_callback callback, void *user) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(easy, CURLOPT_HEADERDATA, user);
}

static inline CURLcode relay_curl_get_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode relay_curl_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The result of a CURLMSG_DONE message (a member of an anonymous union).
static inline CURLcode relay_curl_msg_result(const CURLMsg *message) { return message->data.result; }

#endif
