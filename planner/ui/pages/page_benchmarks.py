"""st.navigation page script: draws planner.ui.benchmarks_page."""

from planner.ui import benchmarks_page

benchmarks_page.render()
