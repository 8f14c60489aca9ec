// The chat page served at / (src/serve/chat_page.html, compiled in by CMake:
// a single static page, no build step, nothing fetched from elsewhere).
#pragma once

namespace synapse::serve {

const char* chat_page_html();

}  // namespace synapse::serve
