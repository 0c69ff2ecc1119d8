// The C++ half of a mixed program (tests/cxx/mixed_main.c): a C entry point
// implemented with the C++ library, so that linking it needs libstdc++.
#include <numeric>
#include <string>
#include <vector>

extern "C" double cxx_sum(const double *x, int n)
{
    std::vector<double> v(x, x + n);
    std::string s = std::to_string(v.size()); // pulls in more of libstdc++
    return std::accumulate(v.begin(), v.end(), 0.0) + (s.empty() ? 1.0 : 0.0);
}
