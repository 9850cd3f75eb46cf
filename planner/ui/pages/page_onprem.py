"""st.navigation page script: draws planner.ui.onprem_page."""

from planner.ui import onprem_page

onprem_page.render()
