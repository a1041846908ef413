package service

func (s *Service) customerRoutes() []route {
	return []route{}
}
