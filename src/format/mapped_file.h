// A read-only memory mapping of a whole file.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>

namespace synapse {

class MappedFile {
 public:
  // Throws Error(Io) naming the path and the system error.
  explicit MappedFile(const std::string& path);
  // Bytes made at load (a row permutation, a computed tensor) as a mapping
  // like any other: an anonymous memory file (memfd) called `name` of `size`
  // bytes, which `fill` writes once, so the model's weights all live in
  // MappedFiles. Throws Error(Io).
  static std::shared_ptr<MappedFile> in_memory(const std::string& name, uint64_t size,
                                               const std::function<void(std::span<uint8_t>)>& fill);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Turns the kernel's readahead for faults in the mapping off or back on
  // (on from the start). Off for small scattered reads (the vectors a paged
  // session decodes at load): with readahead each would read megabytes of
  // the file around it, memory a paged session's budget does not have. A
  // page faulted in with readahead off is mapped alone, and the 2 MiB
  // around it stay in 4 KiB pages for the mapping's life.
  void set_readahead(bool on) const;
  // Bytes of the mapping the kernel maps in 2 MiB pages now (whole huge
  // page-cache folios; the rest is in 4 KiB pages or not resident), from
  // /proc/self/smaps; 0 where that cannot be read. Decode streams every
  // weight, so this share moves its speed (see set_readahead).
  uint64_t bytes_in_huge_pages() const;
  // Takes [offset, offset + length) out of this mapping and out of the page
  // cache (written back first), so that the next reads fault it in again
  // from the file: with readahead on, into 2 MiB page-cache folios where
  // the kernel and file system make them, which the pages of a file
  // written or copied shortly before are not. The range is mapped anew in
  // place, so the next faults find no page tables: kernels before 6.14
  // keep a small-page table after MADV_DONTNEED, and map a 2 MiB folio
  // through it page by page. The bytes read stay the same (the mapping is
  // read-only). False for a memory file (in_memory: its bytes live only in
  // memory) or when the kernel refuses the advice; throws Error(Io) when it
  // refuses the new mapping (the range may then be unmapped).
  bool drop_from_page_cache(uint64_t offset, uint64_t length) const;

 private:
  void advise(uint64_t offset, uint64_t length) const;  // the readahead advice, on a range
  MappedFile(int fd, std::string path);  // maps fd (keeping it) or throws Io naming path

  bool on_disk_ = false;  // opened by path, not in_memory
  int fd_ = -1;           // open while mapped: drops and new mappings reach this very file
  mutable bool readahead_ = true;
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// Bytes of mappings, and of those the FilePmdMapped ones (2 MiB pages), as
// a /proc/PID/smaps text gives them.
struct FileMappingPages {
  uint64_t mapped = 0;
  uint64_t in_huge_pages = 0;
};

// The FilePmdMapped bytes of the mappings overlapping [begin, end)
// (MappedFile::bytes_in_huge_pages reads its own).
uint64_t smaps_huge_page_bytes(std::istream& smaps, uintptr_t begin, uintptr_t end);

// The mappings of the file at `path` (as smaps names it: absolute, links
// resolved). For a program that maps a file itself (llama.cpp, in the peer
// harness).
FileMappingPages smaps_file_mapping_pages(std::istream& smaps, const std::string& path);

}  // namespace synapse
